#!/bin/sh
# Identifier allocation, PostgreSQL, 48 clients over 3 fresh processes, 2 000 allocations: measured
# without a warm-up and after 1 000 unmeasured allocations (the default now), interleaved.
set -e
out=bench/results/2026-11-27-ids-warmup
for round in 1 2 3; do
  for warmup in 0 1000; do
    npx tsx bench/ids.ts --served --db postgres --allocations 2000 --warmup $warmup --small-values 2000 --fill 0 --pages 1 \
      --out $out/warmup-$warmup-$round.json 2>> $out/run.log
  done
done
