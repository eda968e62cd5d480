#!/bin/sh
# Hot pools on main (both databases, every strategy, 100 and 4 094 values) on the quiet machine,
# twice: sh bench/results/2026-11-30-quiet-hot-pools/run.sh (from the tree, built). The one-minute
# load average before each run in load.txt; JSON beside this script.
set -e
out=$(cd "$(dirname "$0")" && pwd)
load() { echo "$(date -u +%H:%M:%S) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt; }
for round in 1 2; do
  load "hot-pools main round $round"
  npx tsx bench/hot-pools.ts --out $out/hot-pools-main-$round.json > /dev/null
done
load end
