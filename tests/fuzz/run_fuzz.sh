#!/bin/sh
# Runs one libFuzzer target: run_fuzz.sh <binary> <limit flag, e.g. -max_total_time=5 or -runs=1000000>
# <seed corpus dir> <work dir>. New inputs go to the work dir (the committed seeds are only read); a crash
# leaves its input there as crash-* and fails the run. Prints the number of inputs run. The per-input timeout is
# generous: a 300-byte progressive JPEG may declare 243 x 65289 pixels (within TensorFlow's limits), which takes
# tens of seconds to decode under ASan on a loaded machine.
set -e
bin=$1 limit=$2 seeds=$3 work=$4
mkdir -p "$work"
[ -d "$seeds" ] || { echo "run_fuzz.sh: no seed corpus $seeds" >&2; exit 1; }
log="$work/last.log"
status=0
LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$(dirname "$0")/lsan.supp}" \
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$bin" "$limit" -timeout=60 -rss_limit_mb=3072 -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work" "$seeds" >"$log" 2>&1 || status=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || true)
echo "$(basename "$bin"): ${runs:-?} inputs in ${secs:-?} s (exit $status)"
if [ "$status" -ne 0 ]; then
  tail -n 60 "$log"
  exit "$status"
fi
