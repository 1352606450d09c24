#!/usr/bin/env bash
# GPU call 5: old (2a5477f, the tree of calls 3-4, carried as .old-src) and new (this tree: the watchdog's
# forced report for collectives, the stale-board sweep at start-up, the output-layer and verdict fixes) alternated,
# A B A B, on the five configs/h200-*.ini presets and h200-1024x32x1024-bf16 --cuda-graph, all with
# --peak-seconds 0 --warmup-seconds 0 (both builds alike; the device budget left did not allow the 2 s settles).
# Each run's line goes to $OUT/table.txt as soon as it ends.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r5; rm -rf $o; mkdir -p $o
(cd .old-src && cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 8) >$o/build-old.log 2>&1 &
{ cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 8; } >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=build/gpu/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; exit 1; }
for round in 1 2; do
  for c in h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph; do
    for s in A B; do
      bin=$new; [ $s = A ] && bin=$old
      if [ $c = graph ]; then args="--config configs/h200-1024x32x1024-bf16.ini --cuda-graph"; else args="--config configs/$c.ini"; fi
      $bin $args --peak-seconds 0 --warmup-seconds 0 --json $o/$c-$s$round.json --force --quiet >$o/$c-$s$round.txt 2>&1
      rc=$?
      python3 -c "
import json,sys; d=json.load(open('$o/$c-$s$round.json')); ph=d['phases']
print('%-24s %s%d rc=$rc weights %s loss %r' % ('$c', '$s', $round, d['weights_checksum'], ph['ddp']['loss'][-1]),
      ' '.join('%s %.4f' % (p, ph[p]['step_ms']['median']) for p in ('local','comm','ddp')))" | tee -a $OUT/table.txt
    done
  done
done
echo done
