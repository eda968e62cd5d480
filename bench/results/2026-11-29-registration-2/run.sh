#!/bin/sh
# Registration on PostgreSQL (the set-up step: POST /resource_providers, PUT inventories, PUT
# traits; 8 clients, 1 000 providers), main (6741d47, built in a copy of its tree) against this
# branch, alternately, in one sitting, with the statement counter and its tracing variant.
# Usage: run.sh MAIN_TREE BRANCH_TREE LAST_ROUND [FIRST_ROUND] [ORDER, default "main branch"]
set -e
out=$(cd "$(dirname "$0")" && pwd)
main=$1 branch=$2 rounds=${3:-2} first=${4:-1} order=${5:-main branch}
for round in $(seq "$first" "$rounds"); do
  for tree in $order; do
    dir=$main; [ "$tree" = branch ] && dir=$branch
    echo "$tree $round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/load.txt"
    (cd "$dir" && ALLOT_BENCH_QUERY_TRACE_FILE="$out/$tree-$round.trace.json" npx tsx bench/placement.ts --vs-real \
      --targets allot-postgres --providers 1000 --concurrency 8 --steps setup --no-baselines --count-queries \
      --out "$out/$tree-$round.json" > /dev/null 2>> "$out/$tree-$round.log")
    echo "$tree $round end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/load.txt"
  done
done
