#!/bin/sh
# Issue 31 (h31sq): a reservation's and a bare-metal allocation's CPU before and after bare metal's
# node pick, allocation insert and finish were written once (db/statement.ts) instead of built and
# compiled per request; base and new alternated in one sitting (database backend).
#   sh run.sh BASE_TREE NEW_TREE [ROUNDS] [OUT_DIR]   (both trees built: npm run build)
# Writes {base,new}-N.json (reservations), baremetal-{base,new}-N.json, load.txt into OUT_DIR
# (default: here).
# The profiles (profile-{before,after}-sqlite.txt), each tree's own, apart from this script:
#   npx tsx bench/reservations.ts --root TREE --reservations 800 --concurrency 16 --dialects sqlite \
#     --backends database --allot-cpu-prof DIR
#   npx tsx bench/cpu-profile.ts DIR --last SECONDS --callers kysely --top 30   (SECONDS: the run's)
set -e
base=$1 new=$2 rounds=${3:-3}
here=$(mkdir -p "${4:-$(dirname "$0")}" && cd "${4:-$(dirname "$0")}" && pwd)
cd "$(dirname "$0")/../../.."
for i in $(seq 1 "$rounds"); do
  for t in base new; do
    eval root=\$$t
    echo "$t-$i $(uptime)" >> "$here/load.txt"
    npx tsx bench/reservations.ts --root "$root" --reservations 500 --concurrency 16 --dialects sqlite,postgres --backends database --out "$here/$t-$i.json" > /dev/null
    echo "baremetal-$t-$i $(uptime)" >> "$here/load.txt"
    npx tsx bench/baremetal.ts --root "$root" --allocations 500 --concurrency 16 --dialects sqlite,postgres --backends database --pool-sizes '' --out "$here/baremetal-$t-$i.json" > /dev/null
  done
done
echo "end $(uptime)" >> "$here/load.txt"
