#!/bin/sh
# Hot pools on the quiet machine (issue 32): main before allot_take_auto (a0eff99, BASE), the
# helper's branch as it was (FULL: its batch committed without waiting for the WAL flush and was
# answered after a synchronous commit that followed), and the same without that (SYNC: what main
# keeps). Each tree built (`npm run build`); run from a tree's root. Three rounds of PostgreSQL (48
# clients over 3 processes; lowest, highest, next_after_last; 100 and 4 094 values), then SQLite
# (one process) once.
set -e
out=$(cd "$(dirname "$0")" && pwd)
for round in 1 2 3; do
  for t in base full sync; do
    eval root=\$$(echo $t | tr a-z A-Z)
    [ -n "$root" ] || continue
    echo "$t-$round start $(cat /proc/loadavg)" >> "$out/load.txt"
    npx tsx bench/hot-pools.ts --dialects postgres --sizes 100,4094 --strategies lowest,highest,next_after_last --root "$root" --out "$out/pg-$t-$round.json" > /dev/null
  done
done
echo "sqlite start $(cat /proc/loadavg)" >> "$out/load.txt"
npx tsx bench/hot-pools.ts --dialects sqlite --sizes 100,4094 --strategies lowest,highest,next_after_last --root "$SYNC" --out "$out/sqlite.json" > /dev/null
echo "end $(cat /proc/loadavg)" >> "$out/load.txt"
