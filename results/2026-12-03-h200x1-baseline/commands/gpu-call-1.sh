#!/usr/bin/env bash
# GPU call 1 (issue 23 §3: run --baseline FILES, read in run_placed before the timed phases): old (8571993, carried as .old-src) and new
# (a93de76, the merge, carried as .new-src) alternated, A B A B, on the five
# configs/h200-*.ini presets and h200-1024x32x1024-bf16 --cuda-graph, both at their default 2 s settle
# (--peak-seconds 0 on both: the peak runs after the phases and does not touch them). Per run: exit code, wall
# time, weights checksum, final ddp loss, each phase's step median and settle seconds. Each run's line goes to
# $OUT/table.txt as soon as it ends.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/b1; rm -rf $o; mkdir -p $o
(cd .old-src && cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 8) >$o/build-old.log 2>&1 &
( cd .new-src && cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 8 ) >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=.new-src/build/gpu/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv | tee $OUT/gpu.txt
for round in 1 2; do
  for c in h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph; do
    for s in A B; do
      bin=$new; [ $s = A ] && bin=$old
      if [ $c = graph ]; then args="--config configs/h200-1024x32x1024-bf16.ini --cuda-graph"; else args="--config configs/$c.ini"; fi
      t=$(date +%s.%N)
      $bin $args --peak-seconds 0 --json $o/$c-$s$round.json --force --quiet >$o/$c-$s$round.txt 2>&1
      rc=$?
      w=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}")
      python3 -c "
import json,sys; d=json.load(open('$o/$c-$s$round.json')); ph=d['phases']
print('%-24s %s%d rc=$rc wall $w s weights %s loss %r' % ('$c', '$s', $round, d['weights_checksum'], ph['ddp']['loss'][-1]),
      ' '.join('%s %.4f [%.2f s]' % (p, ph[p]['step_ms']['median'], ph[p].get('settle_seconds', -1)) for p in ('local','comm','ddp')))" | tee -a $OUT/table.txt
    done
  done
done

cd .new-src/build/gpu && cmake --build . -j 8 >/tmp/b1/build-tests.log 2>&1; cd ../..  # now in .new-src
ctest --preset gpu -L gpu --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu rc=$?" | tee -a $OUT/table.txt
grep -hE 'Test +#|tests passed' $OUT/ctest-gpu.txt
echo done
