#!/bin/sh
# This session's before/after on the quiet machine, one sitting, nothing else running:
#   sh bench/results/2026-11-30-quiet/run.sh BASE_TREE NEW_TREE SQLITE_1M_DB PG_1M_URL
# BASE_TREE and NEW_TREE built (npm run build); the 1 000 000-provider databases filled before by
# `npx tsx bench/index-load.ts --db URL --fill 1000000`. Each step appends the one-minute load
# average before it to load.txt; JSON beside this script.
set -e
base=$1 new=$2 sqlite=$3 pg=$4
out=$(cd "$(dirname "$0")" && pwd)
load() { echo "$(date -u +%H:%M:%S) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt; }
for round in 1 2; do
  for tree in base new; do
    dir=$base; [ $tree = new ] && dir=$new
    load "index-load sqlite $tree $round"
    (cd $dir && npx tsx bench/index-load.ts --db sqlite:$sqlite --runs 3 > $out/index-sqlite-$tree-$round.json)
    load "index-load postgres $tree $round"
    (cd $dir && npx tsx bench/index-load.ts --db $pg --runs 3 > $out/index-postgres-$tree-$round.json)
  done
done
for tree in base new; do
  dir=$base; [ $tree = new ] && dir=$new
  load "served 1M $tree"
  (cd $new && npx tsx bench/candidates.ts --db sqlite:$sqlite --db $pg --root $dir --requests 20 --unlimited-requests 3 --in-process-runs 0 > $out/served-$tree.json)
done
for round in 1 2; do
  for tree in base new; do
    dir=$base; [ $tree = new ] && dir=$new
    load "reservations $tree $round"
    (cd $new && npx tsx bench/reservations.ts --root $dir --reservations 500 --concurrency 16 --dialects sqlite,postgres --backends database --out $out/reservations-$tree-$round.json > /dev/null)
  done
done
load "baremetal new"
(cd $new && npx tsx bench/baremetal.ts --root $new --allocations 500 --concurrency 16 --dialects sqlite,postgres --backends database --pool-sizes '' --out $out/baremetal-new.json > /dev/null)
load end
