#!/usr/bin/env bash
# GPU call 1 (issue 24: --progress in the step loop's callback, the bottom line, --quiet, outputs to -): old (a93de76, carried as .old-src) and new
# (the issue 24 tree, carried as .new-src) alternated, A B A B, on the five
# configs/h200-*.ini presets and h200-1024x32x1024-bf16 --cuda-graph, both at their default 2 s settle
# (--peak-seconds 0 on both: the peak runs after the phases and does not touch them). Per run: exit code, wall
# time, weights checksum, final ddp loss, each phase's step median and settle seconds. Each run's line goes to
# $OUT/table.txt as soon as it ends.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/o1; rm -rf $o; mkdir -p $o
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

# The GPU default job as a user runs it (new build): the last lines (the combined bottom line), its exit code
t=$(date +%s.%N); .new-src/build/gpu/ddpbench --json $o/default.json >$OUT/default-job.txt 2>$OUT/default-job.err; rc=$?
echo "default job rc=$rc wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}") s" | tee -a $OUT/table.txt
tail -4 $OUT/default-job.txt | tee -a $OUT/table.txt
python3 -c "import json; d=json.load(open('$o/default.json')); print('default.json', d['verdict'], d['exit_code'], d['bottom_line'])" | tee -a $OUT/table.txt
# --json - into jq-like python, --quiet on the graph preset
.new-src/build/gpu/ddpbench --config configs/h200-1024x32x1024-bf16.ini --cuda-graph --peak-seconds 0 --quiet --json - 2>$OUT/pipe.err | python3 -c "import json,sys; d=json.load(sys.stdin); print('pipe', d['verdict'], d['bottom_line'])" | tee -a $OUT/table.txt
echo "pipe stderr:"; cat $OUT/pipe.err | tee -a $OUT/table.txt

cd .new-src/build/gpu && cmake --build . -j 8 >/tmp/o1/build-tests.log 2>&1; cd ../..  # now in .new-src
ctest --preset gpu -L gpu --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu rc=$?" | tee -a $OUT/table.txt
grep -hE 'Test +#|tests passed' $OUT/ctest-gpu.txt
echo done
