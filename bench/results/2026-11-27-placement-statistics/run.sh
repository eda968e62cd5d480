#!/bin/sh
# Placement writes on PostgreSQL before (a8c130b: no db-statistics worker) and after (this tree),
# two interleaved rounds; each tree runs its own bench (unchanged between the two).
# BEFORE=/path/to/a8c130b/tree (npm ci done there), run from the after tree's root.
set -e
out=$(pwd)/bench/results/2026-11-27-placement-statistics
for round in 1 2; do
  for tree in before after; do
    root=$([ $tree = before ] && echo "$BEFORE" || pwd)
    (cd "$root" && npm run -s bench:placement -- --vs-real --targets allot-postgres --providers 1000 --concurrency 8,32 \
      --steps setup,claim_write_path,migration_swap,deletes --no-baselines --out $out/$tree-$round.json > /dev/null 2>> $out/run.log)
  done
done
