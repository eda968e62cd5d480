#!/usr/bin/env bash
# Bare-metal allocation before/after, same sitting, interleaved: main's bench/baremetal.ts (copied
# into the before tree: it runs allot in-process, so it measures the tree it sits in) against
# before = 0d34a86 (allocation by the worker only, every candidate listed) and main (the node taken
# in the request by one statement). Two rounds of throughput; one of pool sizes (10 vs 10 000 nodes).
set -u
OUT=/work/main/bench/results/2026-11-24-baremetal
cp /work/main/bench/baremetal.ts /work/wt-before/bench/baremetal-main.ts
for round in 1 2; do
  for tree in before main; do
    if [ $tree = before ]; then dir=/work/wt-before; bench=bench/baremetal-main.ts; else dir=/work/main; bench=bench/baremetal.ts; fi
    pools=''; [ $round = 1 ] && pools='10,10000'
    (cd $dir && npx tsx $bench --dialects sqlite,postgres --backends database --concurrency 1,16 --allocations 600 --pool-sizes "$pools" --pool-allocations 50 --out $OUT/$tree-database-$round.json > /dev/null 2> $OUT/$tree-database-$round.txt)
    (cd $dir && npx tsx $bench --dialects sqlite,postgres --backends placement --concurrency 1,16 --allocations 600 --pool-sizes '' --out $OUT/$tree-placement-$round.json > /dev/null 2> $OUT/$tree-placement-$round.txt)
    echo "round $round $tree done $(date +%T)"
  done
done
rm -f /work/wt-before/bench/baremetal-main.ts
