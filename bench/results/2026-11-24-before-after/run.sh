#!/usr/bin/env bash
# Before/after, same sitting, interleaved: the same bench code (main's) against servers built from
# each tree. before = f8bd904 (before issue 12's refactor), premetrics = 2e0a403 (main before the
# metrics merge), main = now. Placement for all three; bare metal and ids for before and main.
set -u
OUT=/work/main/bench/results/2026-11-24-before-after
mkdir -p $OUT
for round in 1 2; do
  for tree in before premetrics main; do
    dir=/work/wt-$tree; [ $tree = main ] && dir=/work/main
    case $tree in before) off=0;; premetrics) off=1;; *) off=2;; esac
    port=$((19100 + round * 10 + off))
    rm -f /tmp/b-$tree-$round.db*
    (cd $dir && exec node dist/cli/main.js serve --db sqlite:/tmp/b-$tree-$round.db --port $port --log-level warn > /tmp/b-$tree-$round.log 2>&1) &
    pid=$!
    for i in $(seq 1 100); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.2; done
    (cd /work/main && npx tsx bench/placement.ts --url http://127.0.0.1:$port/placement --providers 1000 --concurrency 1,8 --step-seconds 5 --steps setup,candidates,scheduler_loop --out $OUT/placement-$tree-$round.json > /dev/null 2> $OUT/placement-$tree-$round.txt)
    kill $pid; wait $pid 2>/dev/null
    if [ $tree != premetrics ]; then
      (cd $dir && npx tsx bench/baremetal.ts --allocations 200 --concurrency 1,16 --dialects sqlite --backends database > $OUT/baremetal-$tree-$round.json 2>/dev/null)
      (cd $dir && npx tsx bench/ids.ts --db sqlite --seed 100000 --allocations 1000 --concurrency 8 > $OUT/ids-$tree-$round.json 2>/dev/null)
    fi
    echo "round $round $tree done $(date +%T)"
  done
done
