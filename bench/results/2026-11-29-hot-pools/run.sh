#!/bin/sh
# Hot pools on the quiet machine (issue 32): main before the random change (ca1d1db, built in
# BASE) and after it, PostgreSQL, every strategy, 100 and 4 094 values; then SQLite (one process)
# after. Run from the tree's root after `npm run build` (and in BASE).
set -e
out=bench/results/2026-11-29-hot-pools
BASE=${BASE:-/work/wt/base}
for t in before after; do
  root=$BASE; [ $t = after ] && root=.
  echo "$t $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
  npx tsx bench/hot-pools.ts --dialects postgres --root $root --out $out/postgres-$t.json > /dev/null
done
echo "sqlite $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
npx tsx bench/hot-pools.ts --dialects sqlite --out $out/sqlite-after.json > /dev/null
echo "end $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
