#!/bin/sh
# Runs examples/multi_worker_mirrored as two TF_CONFIG workers on loopback, as the README shows; arguments after
# the program go to both workers. Ports come from this shell's PID, below Linux's ephemeral range (32768 and up,
# where other programs' outgoing connections take their ports), and a try whose port is already taken moves on
# to the next pair (three tries). Stops the background worker if the foreground one fails or this script is
# interrupted.
prog=$1; shift
w=
trap '[ -n "$w" ] && kill $w 2>/dev/null' EXIT INT TERM
for try in 1 2 3; do
  p=$((12000 + ($$ * 7 + try * 2) % 20000))
  cluster="\"cluster\":{\"worker\":[\"127.0.0.1:$p\",\"127.0.0.1:$((p + 1))\"]}"
  TF_CONFIG="{$cluster,\"task\":{\"type\":\"worker\",\"index\":1}}" "$prog" "$@" > worker1.log 2>&1 &
  w=$!
  TF_CONFIG="{$cluster,\"task\":{\"type\":\"worker\",\"index\":0}}" "$prog" "$@" > worker0.log 2>&1
  r=$?
  # the leader could not listen: the other worker would wait for it until its timeout
  [ $r -ne 0 ] && grep -q "Address already in use" worker0.log && kill $w 2>/dev/null
  wait $w
  r1=$?
  w=
  if [ $r -ne 0 ] || [ $r1 -ne 0 ]; then
    if grep -q "Address already in use" worker0.log worker1.log && [ $try -lt 3 ]; then
      echo "ports $p, $((p + 1)) taken: trying others"
      continue
    fi
  fi
  break
done
cat worker0.log
[ $r1 -ne 0 ] && { echo "worker 1 failed ($r1):"; cat worker1.log; }
rm -f worker0.log worker1.log
[ $r -eq 0 ] && [ $r1 -eq 0 ]
