#!/usr/bin/env bash
# Test package.deb: builds the Debian packages (libtfcN, libtfc-dev, tfc-tools) with cpack from a build, then, in a
# private mount namespace whose / is an overlay of the real one (the real system and its package database are
# never written: everything lands in a temporary upper folder dropped at the end), installs them with dpkg,
# builds examples/*.c with `pkg-config --cflags --libs tfc` and tests/package/consumer with find_package(tfc)
# from /usr, runs them, removes the packages and checks that nothing of them is left. Needs root.
#   deb_test.sh SOURCE_DIR BUILD_DIR [CC]
set -euo pipefail
src=$(cd "$1" && pwd); build=$(cd "$2" && pwd); cc=${3:-cc}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (dpkg, mount namespaces)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

cpack -G DEB -B "$tmp/debs" --config "$build/CPackConfig.cmake" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
ls "$tmp"/debs/*.deb | xargs -n1 basename
mkdir -p "$tmp/test"
cp "$tmp"/debs/*.deb "$tmp/test/"
cp -r "$src/examples" "$src/tests/package/consumer" "$tmp/test/"
cat >"$tmp/test/inside.sh" <<INSIDE
set -euo pipefail
cd /tfc-test
for p in /usr/include/tfc /usr/lib/libtfc.so /usr/bin/tfc; do [ ! -e \$p ] || { echo "\$p exists before the test"; exit 1; }; done
dpkg -i ./*.deb >dpkg.log 2>&1 || { cat dpkg.log; exit 1; }
dpkg -l 'libtfc*' 'tfc-tools' | grep '^ii' | awk '{print "installed " \$2 " " \$3}'
tfc --version
flags="-std=c11 -Wall -Wextra -Werror -Werror=implicit-function-declaration"
for ex in examples/*.c; do $cc \$flags "\$ex" -o "\${ex%.c}" \$(pkg-config --cflags --libs tfc); done
./examples/eager_tape | grep -q 'dy/dw = tf.Tensor(\[1 4 9\]' || { echo "eager_tape output wrong"; exit 1; }
echo "examples/*.c built with pkg-config; eager_tape ran"
$cc \$flags consumer/fit_line.c -o fit_static \$(pkg-config --cflags --libs tfc-static)
./fit_static
cmake -S consumer -B cm -DCMAKE_C_COMPILER=$cc >cm.log 2>&1 && cmake --build cm >>cm.log 2>&1 || { cat cm.log; exit 1; }
out=\$(./cm/fit_line); echo "find_package(tfc): \$out"
echo "\$out" | grep -Eq '^tfc [0-9.]*: y\(10\) = 19\.0\$' || exit 1
dpkg --purge tfc-tools libtfc-dev \$(dpkg-deb -f libtfc[0-9]*.deb Package) >>dpkg.log 2>&1 || { cat dpkg.log; exit 1; }
left=\$(ls -d /usr/include/tfc /usr/lib/libtfc* /usr/lib/pkgconfig/tfc*.pc /usr/lib/cmake/tfc /usr/bin/tfc 2>/dev/null || true)
[ -z "\$left" ] || { echo "left after dpkg --purge: \$left"; exit 1; }
if dpkg -l 'libtfc*' 'tfc-tools' 2>/dev/null | grep -q '^ii'; then echo "still registered"; exit 1; fi
echo "removed cleanly"
INSIDE

mkdir -p "$tmp/upper" "$tmp/work" "$tmp/root"
unshare --mount --propagation private -- bash -euo pipefail -c '
  tmp=$1
  mount -t overlay overlay -o lowerdir=/,upperdir=$tmp/upper,workdir=$tmp/work $tmp/root
  for d in proc dev sys; do mount --rbind /$d $tmp/root/$d; done
  mkdir -p $tmp/root/tfc-test
  cp -r $tmp/test/. $tmp/root/tfc-test/
  chroot $tmp/root bash /tfc-test/inside.sh
' _ "$tmp" || fail "install/build/run/remove in the overlay root failed"
echo "package.deb: OK"
