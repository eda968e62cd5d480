#!/bin/sh
# The measurements behind `allot sizing` (src/cli/sizing-model.ts) and docs/operations.md
# "Capacity planning": CPU per operation (allot, PostgreSQL, the bench's client) and storage and
# memory per object, small sizes (CPU per operation is what is used). Run from the tree's root
# after `npm run build`; each step appends the one-minute load average before it to load.txt.
set -e
out=bench/results/2026-11-29-sizing
load() { echo "$(date -u +%H:%M:%S) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt; }
load placement
npx tsx bench/placement.ts --vs-real --targets allot-sqlite,allot-postgres --providers 1000,10000 \
  --concurrency 8 --large-concurrency 8 --step-seconds 4 \
  --steps setup,candidates,scheduler_loop,claim_write_path,migration_swap,deletes \
  --no-baselines --count-queries --out $out/placement.json > /dev/null
load baremetal
npx tsx bench/baremetal.ts --allocations 400 --concurrency 8 --dialects sqlite,postgres \
  --backends database,placement --pool-sizes '' --out $out/baremetal.json > /dev/null
load reservations
npx tsx bench/reservations.ts --reservations 200 --concurrency 8 --dialects sqlite,postgres \
  --backends database,placement --out $out/reservations.json > /dev/null
load ids
npx tsx bench/ids.ts --served --db both --allocations 2000 --warmup 500 --small-values 2000 \
  --fill 20000 --fill-timeout 60 --pages 5 --out $out/ids.json > /dev/null
load storage
npx tsx bench/sizing-storage.ts --count 2000 --out $out/storage.json > /dev/null
load end
