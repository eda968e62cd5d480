#!/bin/sh
# Hot pools (issue 32), this branch against main before it (a0eff99, built in BASE: `git worktree
# add --detach BASE a0eff99`, node_modules copied, `npm run build`), alternated, two rounds each on
# PostgreSQL (48 clients over 3 processes, every strategy, 100 and 4 094 values), then SQLite (one
# process) once from this branch. Run from the tree's root after `npm run build`. The load average
# beside each run goes to load.txt. Then random alone once more each (the after rounds above ran a
# build whose random draws also committed without the flush wait; taken back), and the traced
# runs: statements, refusals, lock waiters and CPU per allocation at 4 094 values.
set -e
out=bench/results/2026-11-29-hot-pools-2
BASE=${BASE:-/tmp/h32hp-base}
for round in 1 2; do
  for t in before after; do
    root=$BASE; [ $t = after ] && root=.
    echo "$t-$round start $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
    npx tsx bench/hot-pools.ts --dialects postgres --sizes 100,4094 --root $root --out $out/postgres-$t-$round.json > /dev/null
    echo "$t-$round end $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
  done
done
echo "sqlite start $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
npx tsx bench/hot-pools.ts --dialects sqlite --sizes 100,4094 --out $out/sqlite-after.json > /dev/null
echo "sqlite end $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
for t in before after; do
  root=$BASE; [ $t = after ] && root=.
  echo "random-$t start $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
  npx tsx bench/hot-pools.ts --dialects postgres --sizes 100,4094 --strategies random --root $root --out $out/postgres-random-$t-3.json > /dev/null
  echo "random-$t end $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
done
for t in before after; do
  root=$BASE; [ $t = after ] && root=.
  npx tsx bench/hot-pools.ts --dialects postgres --sizes 4094 --strategies lowest,highest --trace --root $root --out $out/trace-$t.json > /dev/null
done
# Exhaustion answered by the statement that saw it: 100 values only, two more rounds alternated.
for round in 4 5; do
  for t in before after; do
    root=$BASE; [ $t = after ] && root=.
    echo "exhausted-$t-$round start $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
    npx tsx bench/hot-pools.ts --dialects postgres --sizes 100 --root $root --out $out/postgres-100-$t-$round.json > /dev/null
    echo "exhausted-$t-$round end $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/load.txt
  done
done
