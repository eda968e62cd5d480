#!/bin/sh
# The reservation rows of `allot sizing` (src/cli/sizing-model.ts) measured again after the
# reservation's statements stopped being built per request (issue 31), as
# bench/results/2026-11-29-sizing/run.sh measures them: 8 clients, both databases and backends,
# two rounds. Run from the tree's root after `npm run build`, nothing else running.
set -e
out=bench/results/2026-11-30-sizing
load() { echo "$(date -u +%H:%M:%S) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt; }
for round in 1 2; do
  load "reservations $round"
  npx tsx bench/reservations.ts --reservations 200 --concurrency 8 --dialects sqlite,postgres \
    --backends database,placement --out $out/reservations-$round.json > /dev/null
done
load end
