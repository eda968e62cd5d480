#!/bin/sh
# Issue 31: reservations (node + capacity + two identifiers) before and after the statement that
# closes the transaction, alternately in one sitting, beside the bare-metal allocation rate.
#   sh run.sh BASE_TREE NEW_TREE [ROUNDS] [OUT_DIR]   (both trees built: npm run build)
# Writes base-N.json, new-N.json, baremetal.json, load.txt into OUT_DIR (default: here).
set -e
base=$1 new=$2 rounds=${3:-2}
here=$(mkdir -p "${4:-$(dirname "$0")}" && cd "${4:-$(dirname "$0")}" && pwd)
cd "$(dirname "$0")/../../.."
uptime >> "$here/load.txt"
npx tsx bench/baremetal.ts --root "$new" --allocations 500 --concurrency 16 --dialects sqlite,postgres --backends database,placement --out "$here/baremetal.json" > /dev/null
for i in $(seq 1 "$rounds"); do
  for t in base new; do
    eval root=\$$t
    uptime >> "$here/load.txt"
    npx tsx bench/reservations.ts --root "$root" --reservations 500 --concurrency 16 --dialects sqlite,postgres --backends database,placement --out "$here/$t-$i.json" > /dev/null
  done
done
uptime >> "$here/load.txt"
echo done >> "$here/load.txt"
