#!/usr/bin/env bash
# Bare-metal allocation before/after, same sitting, interleaved, two rounds: main's bench/baremetal.ts
# (copied into the before tree: it runs allot in-process, so it measures the tree it sits in) against
# before = 25a5c62 (ten statements per allocation on PostgreSQL) and main (five).
set -u
OUT=/work/main/bench/results/2026-11-25-baremetal
cp /work/main/bench/baremetal.ts /work/wt-before/bench/baremetal-main.ts
cp /work/main/bench/lib/count-queries.mjs /work/main/bench/lib/count-queries.d.mts /work/wt-before/bench/lib/
for round in 1 2; do
  for tree in before main; do
    if [ $tree = before ]; then dir=/work/wt-before; bench=bench/baremetal-main.ts; else dir=/work/main; bench=bench/baremetal.ts; fi
    (cd $dir && npx tsx $bench --dialects postgres,sqlite --backends database,placement --concurrency 1,16 --allocations 400 --pool-sizes '' --out $OUT/$tree-$round.json > /dev/null 2> $OUT/$tree-$round.txt)
    echo "round $round $tree done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
rm -f /work/wt-before/bench/baremetal-main.ts
