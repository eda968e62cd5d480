#!/bin/bash
# How the files here were made (issue 32, index load). BASE: a tree of main at ca1d1db with its
# dist/ built; AFTER: this branch's tree, built. One filled database per dialect, served by each
# build in turn: bench/candidates.ts measures spawn → /readyz 200, the server's own index load
# ('placement provider index loaded'), RSS and the three queries.
set -e
BASE=${BASE:-/tmp/h32idx/base}
AFTER=${AFTER:-/work/wt/h32idx}
OUT=$(dirname "$0")
SQLITE=${SQLITE:-sqlite:/tmp/h32idx/c1m.db}
PG=${PG:?a PostgreSQL database filled by: npx tsx bench/index-load.ts --db URL --fill 1000000 --runs 1}
cd "$AFTER"
# filled with bench/lib/fill-candidates.ts through bench/index-load.ts (which also timed one load)
#   npx tsx bench/index-load.ts --db $SQLITE --fill 1000000 --runs 1 > $OUT/fill-sqlite-1m.json
for round in 1 2; do
  for tree in base after; do
    root=$BASE; [ $tree = after ] && root=$AFTER
    npx tsx bench/candidates.ts --db "$SQLITE" --root "$root" --requests 20 --unlimited-requests 3 --in-process-runs 0 > "$OUT/sqlite-$tree-$round.json"
  done
done
for tree in base after; do
  root=$BASE; [ $tree = after ] && root=$AFTER
  npx tsx bench/candidates.ts --db "$PG" --root "$root" --requests 20 --unlimited-requests 3 --in-process-runs 0 > "$OUT/pg-$tree-1.json"
done
