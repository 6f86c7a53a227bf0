#!/bin/sh
# A/B of two builds through the bench CLI, alternating base/new round by round:
# MB/s from the bench's JSON, plus the bench process's CPU and GC time (gc-cpu-preload.cjs).
#   BASE=/tmp/mq-base packages/client/bench/produce-ab.sh 5 /tmp/ab.txt produce --records 300000 --size 1024
# BASE is a second checkout (git worktree) with its client and bench built; NEW defaults to this tree.
R=$1; OUT=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
NEW=${NEW:-$(cd "$here/../../.." && pwd)}
: "${BASE:?set BASE to the base tree}"
: > "$OUT"
for i in $(seq 1 "$R"); do
  for side in base new; do
    if [ $side = base ]; then tree=$BASE; else tree=$NEW; fi
    tmp=$(mktemp)
    v=$(CPU_OUT=$tmp node -r "$here/gc-cpu-preload.cjs" "$tree/packages/bench/dist/bin.js" "$@" --json 2>/dev/null | grep -o '"mbPerSec":[0-9.]*' | cut -d: -f2)
    echo "$i $side mbps=$v $(cat "$tmp") load=$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT"
    rm -f "$tmp"
  done
done
cat "$OUT"
