#!/bin/sh
# Issue 32 on PostgreSQL: two chunks of the provider index's full load asked for at once.
# BASE and AFTER are trees with a dist/ (`npm run build`); PG is an admin URL (trust).
# usage: sh run.sh BASE AFTER [PG]   (from the repository root)
set -e
BASE=$1 AFTER=$2 PG=${3:-postgres://postgres@127.0.0.1:5499}
HERE=bench/results/2026-11-30-h32pg
for db in h32pg_200k h32pg_1m; do
  node -e "const pg=require('pg');const c=new pg.Client('$PG/postgres');c.connect().then(()=>c.query('create database $db')).catch(e=>console.error(e.message)).finally(()=>c.end())"
done
npx tsx bench/index-load.ts --db $PG/h32pg_200k --fill 200000 --runs 1 > /dev/null
npx tsx bench/index-load.ts --db $PG/h32pg_1m --fill 1000000 --runs 1 > /dev/null
# what a chunk's parts cost the backend, and a COPY out instead (200 000 providers)
node $HERE/srv.mjs $PG/h32pg_200k fmt cat arr pfmt tfmt > $HERE/srv-200k.jsonl
node $HERE/srv.mjs $PG/h32pg_200k fmt fmt4 grp > $HERE/srv-group-200k.jsonl
node $HERE/copy.mjs $PG/h32pg_200k ibin itxt iarr pbin ptxt parr > $HERE/copy-200k.jsonl
node $HERE/scans.mjs $PG/h32pg_200k > $HERE/scans-200k.txt
node $HERE/bounds.mjs $PG/h32pg_1m > $HERE/bounds-1m.txt
# the two builds' indexes, field by field
node bench/results/2026-11-30-index-load/compare.mjs $BASE $AFTER $PG/h32pg_200k > $HERE/compare-200k.json
node bench/results/2026-11-30-index-load/compare.mjs $BASE $AFTER $PG/h32pg_1m > $HERE/compare-1m.json
# (not made here: sqlite-1m-*.jsonl, pg-1m-ahead3.jsonl, compare-sqlite-1m.json, pg-1m-quiet.jsonl — builds with
# LOAD_AHEAD patched in a copy of dist/, a SQLite 1 000 000 database from bench/index-load.ts --fill; summary.txt)
# full loads alternated, client and backend CPU (uptime beside)
for order in "$BASE $AFTER" "$BASE $AFTER" "$BASE $AFTER" "$AFTER $BASE" "$AFTER $BASE" "$AFTER $BASE"; do
  uptime >> $HERE/load.txt
  ROUNDS=1 node --expose-gc $HERE/pg-load.mjs $PG/h32pg_1m $order >> $HERE/pg-1m.jsonl
done
for order in "$BASE $AFTER" "$AFTER $BASE" "$BASE $AFTER" "$AFTER $BASE"; do
  uptime >> $HERE/load.txt
  ROUNDS=1 node --expose-gc $HERE/pg-load.mjs $PG/h32pg_1m $order >> $HERE/pg-1m-later.jsonl
done
# served: spawn -> ready, RSS, candidates p50
for t in $BASE $AFTER; do
  uptime >> $HERE/load.txt
  npx tsx bench/candidates.ts --db $PG/h32pg_1m --root $t --requests 20 --unlimited-requests 3 --in-process-runs 0 > $HERE/served-$(basename $t).json
  npx tsx bench/candidates.ts --db $PG/h32pg_1m --root $t --requests 40 --unlimited-requests 10 --in-process-runs 0 > $HERE/served3-$(basename $t).json
done
npx tsx $HERE/edges.ts $BASE $AFTER > $HERE/edges.txt
