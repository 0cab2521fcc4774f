#!/usr/bin/env bash
# `make fresh-clone-check`: the path of a new user, from a fresh clone of this repository's committed HEAD:
# `make install PREFIX=<new temporary folder>`, then an out-of-tree project (tests/package/consumer: a C program
# and a 5-line CMakeLists.txt) built with find_package(tfc) and, statically, with pkg-config, both run; then
# `pip install <clone>` into a fresh virtual environment and tests/package/python_door.py. Prints the time of
# each step.
#   fresh_clone.sh REPO [JOBS]
set -euo pipefail
repo=$(cd "$1" && pwd); jobs=${2:-2}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
step() { printf '%-52s %4ds\n' "$1" $(($(date +%s) - t)); t=$(date +%s); }
t=$(date +%s)
git clone -q "$repo" "$tmp/tfc"; step "git clone"
make -C "$tmp/tfc" install PREFIX="$tmp/prefix" JOBS="$jobs" >"$tmp/install.log" 2>&1 ||
  { tail -30 "$tmp/install.log"; exit 1; }
step "make install PREFIX=$tmp/prefix"
mkdir "$tmp/proj" && cp "$tmp"/tfc/tests/package/consumer/* "$tmp/proj/"
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null && cmake --build "$tmp/proj/build" >/dev/null
LD_LIBRARY_PATH=$tmp/prefix/lib "$tmp/proj/build/fit_line"; step "find_package(tfc) project: built and run"
PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
cc "$tmp/proj/fit_line.c" -o "$tmp/proj/fit_static" $(PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags --libs tfc-static)
"$tmp/proj/fit_static"; step "pkg-config tfc-static program: built and run"
python3 -m venv "$tmp/venv" && "$tmp/venv/bin/python" -m pip install -q "$tmp/tfc" >"$tmp/pip.log" 2>&1 ||
  { tail -30 "$tmp/pip.log"; exit 1; }
step "pip install (fresh venv)"
(cd "$tmp" && env -u TFC_LIBRARY "$tmp/venv/bin/python" "$tmp/tfc/tests/package/python_door.py"); step "python: import tfc, train a small model"
echo "fresh clone: OK"
