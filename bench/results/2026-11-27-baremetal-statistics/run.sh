#!/bin/sh
# Bare-metal allocation before (a8c130b: no db-statistics worker) and after (this tree), same bench
# (served, lean client), two interleaved rounds, PostgreSQL, 2 000 allocations per cell.
# BEFORE=/path/to/a8c130b/tree (built), run from the after tree's root. Round 2 was run with
# ROUNDS=2 POOL_SIZES= (setting up 10 000 nodes four times a round took ~20 minutes).
set -e
out=bench/results/2026-11-27-baremetal-statistics
for round in ${ROUNDS:-1 2}; do
  for tree in before after; do
    root=$([ $tree = before ] && echo "$BEFORE" || pwd)
    npx tsx bench/baremetal.ts --root "$root" --dialects postgres --concurrency 1,16 --allocations 2000 --pool-sizes "${POOL_SIZES-10,10000}" \
      --out $out/$tree-$round.json > /dev/null 2>> $out/run.log
  done
done
