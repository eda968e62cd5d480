#!/bin/sh
# Bare-metal allocation on PostgreSQL before (00ba638: the placement backend's claim a statement of
# its own, BEGIN … COMMIT around it) and after (this tree: the claim inside the one statement that
# reserves the node), same bench (served, lean client), interleaved rounds, 2 000 allocations per
# cell. BEFORE=/path/to/00ba638/tree (built), run from the after tree's root.
set -e
out=bench/results/2026-11-27-baremetal-claim
for round in ${ROUNDS:-1 2}; do
  for tree in before after; do
    root=$([ $tree = before ] && echo "$BEFORE" || pwd)
    npx tsx bench/baremetal.ts --root "$root" --dialects postgres --concurrency 1,16 --allocations 2000 --pool-sizes "" \
      --out $out/$tree-$round.json > /dev/null 2>> $out/run.log
  done
done
