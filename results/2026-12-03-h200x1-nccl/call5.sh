#!/usr/bin/env bash
# GPU call 5: the NVML counter layer of issue 26 (merged as 604c7c3) changes how the topology report (before the timed
# phases) stores PCIe figures: old (47ff2d2, carried as .old-src) and new (604c7c3, .new-src) A B A B on the five presets
# and 1024x32x1024 --cuda-graph (--peak-seconds 0); the PCIe line of ddpbench topo beside nvidia-smi -q -d PCIE;
# ctest -L gpu of the new build.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/o5; rm -rf $o; mkdir -p $o
(cmake -S .old-src -B /tmp/b5-old --preset gpu >/dev/null && cmake --build /tmp/b5-old --target ddpbench ddpbench_nccl_profiler -j 8) >$o/build-old.log 2>&1 &
(cmake -S .new-src -B /tmp/b5-new --preset gpu >/dev/null && cmake --build /tmp/b5-new -j 8) >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=/tmp/b5-old/ddpbench new=/tmp/b5-new/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; exit 1; }
for round in 1 2; do
  for c in h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph; do
    for s in A B; do
      bin=$new; [ $s = A ] && bin=$old
      if [ $c = graph ]; then args="--config configs/h200-1024x32x1024-bf16.ini --cuda-graph"; else args="--config configs/$c.ini"; fi
      t=$(date +%s.%N)
      (cd .new-src && $bin $args --peak-seconds 0 --json $o/$c-$s$round.json --force --quiet >$o/$c-$s$round.txt 2>&1); rc=$?
      w=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}")
      python3 -c "
import json; d=json.load(open('$o/$c-$s$round.json')); ph=d['phases']
print('%-24s %s%d rc=$rc wall $w s weights %s loss %r' % ('$c', '$s', $round, d['weights_checksum'], ph['ddp']['loss'][-1]),
      ' '.join('%s %.4f' % (p, ph[p]['step_ms']['median']) for p in ('local','comm','ddp')))" | tee -a $OUT/table.txt
    done
  done
done
(cd .new-src && $new topo) > $OUT/topo-new.txt 2>&1; (cd .new-src && $old topo) > $OUT/topo-old.txt 2>&1
grep -iE "pcie|gen[0-9]" $OUT/topo-new.txt | head -4
nvidia-smi -q -d PCIE | grep -iE "Generation|Max|Current|Width|Replay" | head -12 | tee $OUT/nvidia-smi-pcie.txt
cd /tmp/b5-new && ctest -L gpu --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu rc=$?"; grep -hE 'Test +#|tests passed' $OUT/ctest-gpu.txt
echo done
