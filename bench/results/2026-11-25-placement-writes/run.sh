#!/usr/bin/env bash
# Before/after, same sitting, interleaved, twice: the same bench code (unchanged by this branch)
# starting allot on SQLite and on PostgreSQL (embedded, throwaway) from each tree.
# before = 25a5c62 (main at the branch point, in a temporary worktree), after = placement-writes.
set -u
OUT=/work/wt-pwrites/bench/results/2026-11-25-placement-writes
for round in 1 2; do
  for tree in before after; do
    dir=/work/wt-pwrites; [ $tree = before ] && dir=/work/wt-pwrites-before
    (cd $dir && npm run -s bench:placement -- --vs-real --targets allot-sqlite,allot-postgres --providers 1000 \
      --steps setup,claim_write_path,migration_swap,deletes --no-baselines --count-queries \
      --out $OUT/$tree-$round.json > /dev/null 2> $OUT/$tree-$round.txt)
    echo "round $round $tree done $(date +%T) rc=$?"
  done
done
