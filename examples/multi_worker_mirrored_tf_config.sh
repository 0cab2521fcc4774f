#!/bin/sh
# Runs examples/multi_worker_mirrored as two TF_CONFIG workers on loopback (ports derived from this shell's
# PID), as the README shows; arguments after the program go to both workers. Stops the background worker if
# the foreground one fails or this script is interrupted.
prog=$1; shift
p=$((20000 + $$ % 20000))
cluster="\"cluster\":{\"worker\":[\"127.0.0.1:$p\",\"127.0.0.1:$((p + 1))\"]}"
TF_CONFIG="{$cluster,\"task\":{\"type\":\"worker\",\"index\":1}}" "$prog" "$@" > worker1.log 2>&1 &
w=$!
trap 'kill $w 2>/dev/null' EXIT INT TERM
TF_CONFIG="{$cluster,\"task\":{\"type\":\"worker\",\"index\":0}}" "$prog" "$@"
r=$?
wait $w
r1=$?
trap - EXIT
[ $r1 -ne 0 ] && { echo "worker 1 failed ($r1):"; cat worker1.log; }
rm -f worker1.log
[ $r -eq 0 ] && [ $r1 -eq 0 ]
