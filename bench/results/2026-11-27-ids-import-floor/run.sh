#!/bin/sh
# What an identifier import costs when no value splits a free span (contiguous: only the
# allocation rows grow) against uniformly scattered values (each splits one): the floor a free-space
# representation could reach. Eight HTTP imports of 10 000 values into one 16 M-value pool, an
# in-process server, each database, two interleaved rounds; one JSON line per run (the first line
# bench/ids-import-profile.ts prints), pg_stat_statements' table after it.
set -e
out=bench/results/2026-11-27-ids-import-floor
for round in ${ROUNDS:-1 2}; do
  for db in postgres sqlite; do
    for layout in scattered contiguous; do
      npx tsx bench/ids-import-profile.ts --db $db --layout $layout > $out/$db-$layout-$round.txt
    done
  done
done
head -qn 1 $out/*.txt > $out/runs.jsonl
