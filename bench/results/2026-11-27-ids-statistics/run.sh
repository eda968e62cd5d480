#!/usr/bin/env bash
# Imports of 100 on PostgreSQL before (main at 8db3e4e, checked out in ../before) and after (this
# tree): the served identifier bench, default sizes but no large fill, two interleaved rounds.
# Run from the repository root after `npm run build` in both trees.
set -euo pipefail
out=bench/results/2026-11-27-ids-statistics
for r in 1 2; do
  for root in ../before .; do
    n=$([ "$root" = . ] && echo main || echo before)
    npx tsx bench/ids.ts --served --db postgres --root "$root" --allocations 2000 --small-values 20000 --fill 0 --pages 1 --out "$out/$n-$r.json"
  done
done
