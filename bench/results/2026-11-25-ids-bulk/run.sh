#!/bin/sh
# Issue 15, identifier bulk fill: before (the branch point, 4e185b9) and after (branch ids-bulk),
# same sitting, interleaved, two rounds on each database. Run from the ids-bulk worktree after
# `npm run build` in both trees; BEFORE is a worktree of 4e185b9 (built), AFTER this tree.
set -e
BEFORE=${BEFORE:-/work/wt-bulk-before}
AFTER=${AFTER:-$(pwd)}
OUT=bench/results/2026-11-25-ids-bulk
ARGS="--served --allocations 500 --small-values 2000 --fill 200000 --fill-timeout 120 --pages 5"
for round in 1 2; do
  for db in postgres sqlite; do
    for side in before after; do
      root=$BEFORE; [ $side = after ] && root=$AFTER
      echo "$(date -u +%H:%M:%S) $side $db $round: $(uptime)" >> $OUT/loadavg.txt
      npm run -s bench:ids -- $ARGS --db $db --root $root --out $OUT/$side-$db-$round.json
    done
  done
done
echo "$(date -u +%H:%M:%S) end: $(uptime)" >> $OUT/loadavg.txt
