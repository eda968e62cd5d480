#!/bin/sh
# Issue 31: a reservation's CPU before and after the hot path's statements were written once
# instead of built and compiled by the query builder per request; alternately in one sitting
# (database backend), after the bare-metal allocation rate of the new tree.
#   sh run.sh BASE_TREE NEW_TREE [ROUNDS] [OUT_DIR]   (both trees built: npm run build)
# Writes base-N.json, new-N.json, baremetal.json, load.txt into OUT_DIR (default: here).
set -e
base=$1 new=$2 rounds=${3:-2}
here=$(mkdir -p "${4:-$(dirname "$0")}" && cd "${4:-$(dirname "$0")}" && pwd)
cd "$(dirname "$0")/../../.."
echo "baremetal $(uptime)" >> "$here/load.txt"
npx tsx bench/baremetal.ts --root "$new" --allocations 500 --concurrency 16 --dialects sqlite,postgres --backends database --pool-sizes '' --out "$here/baremetal.json" > /dev/null
for i in $(seq 1 "$rounds"); do
  for t in base new; do
    eval root=\$$t
    echo "$t-$i $(uptime)" >> "$here/load.txt"
    npx tsx bench/reservations.ts --root "$root" --reservations 500 --concurrency 16 --dialects sqlite,postgres --backends database --out "$here/$t-$i.json" > /dev/null
  done
done
echo "end $(uptime)" >> "$here/load.txt"
