#!/bin/sh
# Issue 31: a reservation's pools taken by allot_take_auto on PostgreSQL's fast path (h31tk) against
# main before it (71e607b), alternated in one sitting. BASE and NEW are trees built with `npm run build`.
#   sh bench/results/2026-11-30-h31tk/run.sh /work/wt/h31tk-base /work/wt/h31tk 1 3   # rounds 1-3
#   sh bench/results/2026-11-30-h31tk/run.sh /work/wt/h31tk-base /work/wt/h31tk 4 5   # rounds 4-5
# Each run's load average before and after is in SIDE-ROUND.load.
set -e
BASE=$1 NEW=$2 FIRST=${3:-1} LAST=${4:-3}
OUT=$(dirname "$0")
for i in $(seq "$FIRST" "$LAST"); do
  for side in base new; do
    if [ "$side" = base ]; then ROOT=$BASE; else ROOT=$NEW; fi
    uptime > "$OUT/$side-$i.load"
    npx tsx bench/reservations.ts --root "$ROOT" --reservations 500 --concurrency 16 --dialects postgres --backends database --out "$OUT/$side-$i.json"
    uptime >> "$OUT/$side-$i.load"
  done
done
# The single allocation's statement (now the same LATERAL text with one pool), hot pools, 3 rounds
# alternated (base-1 first; the 1-minute load before each run in hot-pools-load.txt):
#   npx tsx bench/hot-pools.ts --root TREE --dialects postgres --sizes 4094 --strategies lowest,next_after_last \
#     --out bench/results/2026-11-30-h31tk/hot-pools-SIDE-ROUND.json
