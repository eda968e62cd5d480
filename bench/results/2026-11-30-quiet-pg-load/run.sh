#!/bin/sh
# The PostgreSQL full load at 1 000 000 providers, base (4f5431a) and main alternated, on the
# quiet machine at the end of the session:
#   sh bench/results/2026-11-30-quiet-pg-load/run.sh BASE_TREE NEW_TREE PG_1M_URL ROUNDS
# The database filled before (bench/index-load.ts --fill 1000000). The one-minute load average
# before each run in load.txt; JSON beside this script.
set -e
base=$1 new=$2 pg=$3 rounds=${4:-2}
out=$(cd "$(dirname "$0")" && pwd)
load() { echo "$(date -u +%H:%M:%S) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt; }
for round in $(seq 1 $rounds); do
  for tree in base new; do
    dir=$base; [ $tree = new ] && dir=$new
    load "index-load postgres $tree $round"
    (cd $dir && npx tsx bench/index-load.ts --db $pg --runs 3 > $out/index-postgres-$tree-$round.json)
  done
done
load end
