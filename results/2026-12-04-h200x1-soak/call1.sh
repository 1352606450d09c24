#!/usr/bin/env bash
# GPU call 1 (issue 26, the soak): old (84bc7f1, carried as .old-src) and new (.new-src) A B A B on the five presets
# and 1024x32x1024 --cuda-graph (--peak-seconds 0): the change touches what runs before the timed phases (the GPU
# default job's sizing moved into gpu_default_config, findings carry interval and time); then a short soak of the
# new build (accept --soak 90s --interval 15s) with nvidia-smi sampled beside it; ctest -L gpu of the new build.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/o1; rm -rf $o; mkdir -p $o
(cmake -S .old-src -B /tmp/b1-old --preset gpu >/dev/null && cmake --build /tmp/b1-old --target ddpbench ddpbench_nccl_profiler -j 8) >$o/build-old.log 2>&1 &
(cmake -S .new-src -B /tmp/b1-new --preset gpu >/dev/null && cmake --build /tmp/b1-new --target ddpbench ddpbench_nccl_profiler -j 8) >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=/tmp/b1-old/ddpbench new=/tmp/b1-new/ddpbench
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
# the short soak, nvidia-smi beside it every second
nvidia-smi --help-query-gpu > $o/smi-help.txt 2>&1
f=""
for q in timestamp clocks.sm power.draw temperature.gpu pcie.link.gen.current pcie.link.gen.gpucurrent pcie.link.gen.max \
         pcie.link.width.current pcie.link.width.max ecc.errors.corrected.volatile.total ecc.errors.uncorrected.volatile.total \
         clocks_event_reasons.active clocks_throttle_reasons.active clocks_event_reasons.hw_slowdown clocks_event_reasons.sw_power_cap \
         clocks_event_reasons.sw_thermal_slowdown clocks_event_reasons.hw_thermal_slowdown clocks_event_reasons.hw_power_brake_slowdown; do
  grep -q "^\"$q\"" $o/smi-help.txt && f="$f${f:+,}$q"
done
echo "nvidia-smi fields: $f"
nvidia-smi -q -d ECC,PCIE,PERFORMANCE,TEMPERATURE > $OUT/smi-q-before.txt 2>&1
nvidia-smi --query-gpu=$f --format=csv -lms 1000 > $o/smi.csv 2>&1 &
smi=$!
(cd .new-src && $new accept --soak 90s --interval 15s --json $o/soak.json --csv $o/soak.csv --prom $o/soak.prom --progress log) > $OUT/soak.txt 2>&1
echo "soak rc=$?"
kill $smi; wait $smi 2>/dev/null
nvidia-smi -q -d ECC,PCIE,PERFORMANCE,TEMPERATURE > $OUT/smi-q-after.txt 2>&1
tail -25 $OUT/soak.txt
cd $o && tar czf $OUT/call1.tgz *.json *.txt soak.csv soak.prom smi.csv smi-help.txt build-*.log
echo done
