#!/bin/bash
# Placement's candidates answer written from typed pieces (core/json-text.ts) against a19fd85, on
# one 10 000-provider SQLite database filled once, the two builds alternated (rounds 4-8; the
# shared machine's load is in each file). Usage: run.sh <base tree> <branch tree> <db file> <first round> <last round>
set -e
base=$1 branch=$2 db=$3
for r in $(seq "$4" "$5"); do
  for t in base branch; do
    root=$branch; [ "$t" = base ] && root=$base
    npx tsx bench/candidates.ts --db "sqlite:$db" --root "$root" --requests 200 --unlimited-requests 20 --in-process-runs 0 > "$t-$r.json"
  done
done
