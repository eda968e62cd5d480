#!/bin/sh
# Placement writes on PostgreSQL before (4e185b9) and after the inventories' UPDATE found by
# `id = any(array(...))` instead of a join the generic plan hashed; interleaved, two rounds.
# Round 3 (ROUNDS=3 SIDES="before final") adds the consumer read as one prepared statement.
# BEFORE and AFTER are built trees; each bench measures the allot of the tree it runs from.
set -e
OUT=$(cd "$(dirname "$0")" && pwd)
for round in ${ROUNDS:-1 2}; do
  for side in ${SIDES:-before after}; do
    tree=$([ $side = before ] && echo "$BEFORE" || echo "$AFTER")  # after and final: the tree in AFTER
    uptime > "$OUT/$side-$round.load"
    (cd "$tree" && npx tsx bench/placement.ts --vs-real --targets allot-postgres --no-baselines \
      --providers 1000 --concurrency 1,8,32 --steps setup,claim_write_path,migration_swap,deletes \
      --step-seconds 8 --count-queries --out "$OUT/$side-$round.json" > "$OUT/$side-$round.txt" 2>&1)
  done
done
