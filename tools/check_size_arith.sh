#!/bin/sh
# The size-arithmetic rule (src/core/size_check.h): no raw `*` or `*=` with a dim operand (`dims[`) in the
# library outside size_check.h, unless the line says why it cannot overflow with a `size-ok:` comment.
# Lines present before the rule are counted per file in tools/size_arith_baseline.txt; a file may only go
# down. Run from the repository root (make check-sizes, part of make test). --update rewrites the baseline.
set -e
cd "$(dirname "$0")/.."
baseline=tools/size_arith_baseline.txt
scan() {
  # a dim multiplied (dims[..] * x, x * ..dims[..], x *= ..dims[..]), not in a comment, not marked size-ok
  grep -rnE --include='*.c' --include='*.h' \
    -e 'dims\[[^]]*\][[:space:]]*\*[^/*]' -e '[^/*][[:space:]]\*=?[[:space:]]*\(?[A-Za-z_][A-Za-z0-9_]*(->|\.)?(shape\.|shape->)?dims\[' \
    src/core src/ops src/kernels src/data src/keras src/eager 2>/dev/null |
    grep -v '^src/core/size_check\.h:' | grep -v 'size-ok:' |
    grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/\*|\*[[:space:]/]|\*$|//)' || true
}
counts() { scan | cut -d: -f1 | sort | uniq -c | awk '{print $2, $1}'; }
if [ "$1" = "--update" ]; then
  counts >"$baseline"
  echo "check_size_arith: baseline written ($(wc -l <"$baseline") files)"
  exit 0
fi
report=$(counts | while read -r file n; do
  allowed=$(awk -v f="$file" '$1 == f {print $2}' "$baseline" 2>/dev/null)
  if [ "$n" -gt "${allowed:-0}" ]; then
    echo "check_size_arith: $file has $n raw multiplications of dims (allowed ${allowed:-0}); use the helpers of"
    echo "  src/core/size_check.h or mark a line that cannot overflow with a 'size-ok: <why>' comment:"
    scan | grep "^$file:" | sed 's/^/    /'
  fi
done)
if [ -n "$report" ]; then
  echo "$report"
  exit 1
fi
echo "check_size_arith: ok"
