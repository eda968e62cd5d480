#!/usr/bin/env bash
# Bare-metal allocation before/after, same sitting, interleaved, two rounds, PostgreSQL and SQLite,
# both backends, 1 and 16 clients: before = main at the branch point (4e185b9, five statements per
# allocation on PostgreSQL), after = this branch (one). bench/baremetal.ts runs allot in-process
# and is the same file in both trees. In each round, after the two trees, allot's own Placement
# claim rate on PostgreSQL (the write path, 8 clients) from the after tree, so that the issue's
# ratio (bare-metal allocations ≥ 0.5× claims) is measured in the same sitting. Then profile.ts.
set -u
OUT=/work/wt-bm/bench/results/2026-11-25-baremetal-one
cd /work/main && git worktree add --detach /work/wt-bm-before 4e185b9 > /dev/null && (cd /work/wt-bm-before && npm ci > /dev/null 2>&1)
uptime > $OUT/load.txt
for round in 1 2; do
  for tree in before after; do
    if [ $tree = before ]; then dir=/work/wt-bm-before; else dir=/work/wt-bm; fi
    (cd $dir && npx tsx bench/baremetal.ts --dialects postgres,sqlite --backends database,placement --concurrency 1,16 --allocations 400 --pool-sizes '' --out $OUT/$tree-$round.json > /dev/null 2> $OUT/$tree-$round.txt)
    echo "round $round $tree done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $OUT/load.txt
  done
  (cd /work/wt-bm && npx tsx bench/placement.ts --vs-real --targets allot-postgres --providers 1000 --steps setup,claim_write_path \
    --concurrency 8 --no-baselines --count-queries --out $OUT/claims-$round.json > /dev/null 2> $OUT/claims-$round.txt)
  echo "round $round claims done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $OUT/load.txt
done
# where the time goes, before and after (pg_stat_statements, PostgreSQL CPU, lock waits)
(cd /work/wt-bm && npx tsx bench/results/2026-11-25-baremetal-one/profile.ts /work/wt-bm-before /work/wt-bm > $OUT/profile.txt 2>&1)
echo "profile done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $OUT/load.txt
cd /work/main && git worktree remove --force /work/wt-bm-before
