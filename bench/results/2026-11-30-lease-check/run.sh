#!/bin/sh
# Hot pools on PostgreSQL before and after the lease check asked as the pool's earliest lease
# (migration 017), alternated in one sitting:
#   sh bench/results/2026-11-30-lease-check/run.sh BASE_TREE NEW_TREE ROUNDS
# Both trees built (npm run build). Each run appends the one-minute load average before it to
# load.txt; JSON beside this script.
set -e
base=$1 new=$2 rounds=${3:-2}
out=$(cd "$(dirname "$0")" && pwd)
load() { echo "$(date -u +%H:%M:%S) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt; }
for round in $(seq 1 $rounds); do
  for tree in base new; do
    dir=$base; [ $tree = new ] && dir=$new
    load "hot-pools postgres $tree $round"
    (cd $new && npx tsx bench/hot-pools.ts --root $dir --dialects postgres --sizes 100,4094 --trace --out $out/hot-pools-$tree-$round.json > /dev/null)
  done
done
load end
