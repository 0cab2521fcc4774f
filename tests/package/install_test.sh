#!/usr/bin/env bash
# Test package.install: installs a build into a fresh temporary prefix as a user would (cmake --install), moves
# the prefix elsewhere (it must be relocatable), checks that nothing installed names the source, build or
# install folder (no RUNPATH, no absolute path in tfc.pc or the CMake package), and checks the soname; then
# builds tests/package/consumer (a 30-line program, a 5-line CMakeLists) with find_package(tfc), with
# `pkg-config --cflags --libs tfc` and statically with tfc-static.pc, builds every examples/*.c against the
# installed headers with -Werror=implicit-function-declaration, and runs what it built.
#   install_test.sh SOURCE_DIR BUILD_DIR [CC]
set -euo pipefail
src=$(cd "$1" && pwd); build=$(cd "$2" && pwd); cc=${3:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/stage" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
mv "$tmp/stage" "$tmp/moved"
p=$tmp/moved
libdir=$(dirname "$(find "$p" -name 'libtfc.so.*.*.*' | head -1)")
[ -n "$libdir" ] || fail "no libtfc.so.MAJOR.MINOR.PATCH installed"
ver=$(sed -n 's/^#define TFC_VERSION_STRING "\(.*\)"/\1/p' "$p/include/tfc/version.h")
major=${ver%%.*}
for f in "$libdir/libtfc.so.$ver" "$libdir/libtfc.so.$major" "$libdir/libtfc.so" "$libdir/libtfc.a" "$p/bin/tfc" \
         "$libdir/pkgconfig/tfc.pc" "$libdir/pkgconfig/tfc-static.pc" "$libdir/cmake/tfc/tfcConfig.cmake" \
         "$p/include/tfc/tfc.h"; do
  [ -e "$f" ] || fail "not installed: ${f#"$p"/}"
done
soname=$(readelf -d "$libdir/libtfc.so.$ver" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libtfc.so.$major" ] || fail "SONAME is '$soname', expected libtfc.so.$major"
for f in "$libdir/libtfc.so.$ver" "$p/bin/tfc"; do
  if readelf -d "$f" | grep -E '\((RUNPATH|RPATH)\)'; then fail "${f#"$p"/} has a RUNPATH"; fi
done
for d in "$src" "$build" "$tmp"; do
  if grep -rlF "$d" "$p" --include='*.pc' --include='*.cmake' --include='*.h'; then fail "installed files name $d"; fi
done
[ "$("$p/bin/tfc" --version)" = "tfc $ver" ] || fail "tfc --version: $("$p/bin/tfc" --version)"
echo "installed $ver: soname $soname, no RUNPATH, no build paths, relocated to another folder"

python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
  "$src/tests/package/consumer/fit_line.c" "$src/README.md" || fail "README.md does not show tests/package/consumer/fit_line.c as it is"

export LD_LIBRARY_PATH=$libdir PKG_CONFIG_PATH=$libdir/pkgconfig
want='^tfc [0-9.]*: y\(10\) = 19\.0$'
cflags=(-std=c11 -Wall -Wextra -Werror -Werror=implicit-function-declaration)

# find_package(tfc) -> tfc::tfc
cmake -S "$src/tests/package/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="${cflags[*]}" >"$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1 ||
  { cat "$tmp/cm.log"; fail "find_package(tfc) consumer did not build"; }
out=$("$tmp/cm/fit_line"); echo "find_package(tfc):      $out"; grep -Eq "$want" <<<"$out" || fail "unexpected output"

# pkg-config, shared
$cc "${cflags[@]}" "$src/tests/package/consumer/fit_line.c" -o "$tmp/fit_pc" $(pkg-config --cflags --libs tfc)
readelf -d "$tmp/fit_pc" | grep -q "libtfc.so.$major" || fail "pkg-config build does not need libtfc.so.$major"
out=$("$tmp/fit_pc"); echo "pkg-config tfc:         $out"; grep -Eq "$want" <<<"$out" || fail "unexpected output"

# pkg-config, static libtfc (its dependencies shared); `pkg-config --static tfc` lists the same dependencies
$cc "${cflags[@]}" "$src/tests/package/consumer/fit_line.c" -o "$tmp/fit_static" $(pkg-config --cflags --libs tfc-static)
if readelf -d "$tmp/fit_static" | grep -q 'libtfc\.so'; then fail "static build still needs libtfc.so"; fi
out=$(env -u LD_LIBRARY_PATH "$tmp/fit_static"); echo "pkg-config tfc-static:  $out"
grep -Eq "$want" <<<"$out" || fail "unexpected output"
for m in $(pkg-config --print-requires-private tfc | awk '{print $1}'); do
  pkg-config --static --libs tfc | grep -qF -- "$(pkg-config --libs-only-l "$m" | awk '{print $1}')" ||
    fail "pkg-config --static --libs tfc lacks $m"
done

# every example, through tfc/tfc.h of the installed tree
for ex in "$src"/examples/*.c; do
  name=$(basename "$ex" .c)
  $cc "${cflags[@]}" "$ex" -o "$tmp/$name" $(pkg-config --cflags --libs tfc) || fail "examples/$name.c did not build"
done
out=$("$tmp/eager_tape") || fail "eager_tape failed"
grep -q 'dy/dw = tf.Tensor(\[1 4 9\]' <<<"$out" || fail "eager_tape printed: $out"
echo "examples built against the installed tree: $(cd "$src/examples" && ls *.c | tr '\n' ' ')(eager_tape run)"
echo "package.install: OK"
