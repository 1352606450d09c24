#!/usr/bin/env bash
# GPU call 3 (issue 26): call 2 again on the tree that hashes the weights in a thread (077e5db+1): an 8-minute soak on the H200, `accept --soak 8m` (interval 60 s), with nvidia-smi sampled
# every second beside it (the same figures through nvidia-smi's own NVML queries, to compare value by value) and
# `nvidia-smi -q` before and after (`-d PCIE` is not one of nvidia-smi's display filters: "Failed to parse
# --display/-d flags" in call 1, so the PCI section comes from the whole `-q`; the filter runs with the valid
# ECC,PERFORMANCE,TEMPERATURE,ROW_REMAPPER).
set -uo pipefail
source .device-deps/env.sh
o=/tmp/o3; rm -rf $o; mkdir -p $o
t0=$(date +%s)
(cmake -S .new-src -B /tmp/b3 --preset gpu >/dev/null && cmake --build /tmp/b3 --target ddpbench ddpbench_nccl_profiler -j 16) >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --help-query-gpu > $o/smi-help.txt 2>&1
f=""
for q in timestamp clocks.sm power.draw temperature.gpu pcie.link.gen.current pcie.link.gen.max \
         pcie.link.width.current pcie.link.width.max ecc.errors.corrected.volatile.total ecc.errors.uncorrected.volatile.total \
         retired_pages.pending remapped_rows.pending clocks_event_reasons.active clocks_event_reasons.hw_slowdown \
         clocks_event_reasons.sw_power_cap clocks_event_reasons.sw_thermal_slowdown clocks_event_reasons.hw_thermal_slowdown \
         clocks_event_reasons.hw_power_brake_slowdown; do
  grep -q "^\"$q\"" $o/smi-help.txt && f="$f${f:+,}$q"
done
echo "nvidia-smi fields: $f"
nvidia-smi -q > $o/smi-q-full-before.txt 2>&1
nvidia-smi -q -d ECC,PERFORMANCE,TEMPERATURE,ROW_REMAPPER > $o/smi-q-before.txt 2>&1
nvidia-smi --query-gpu=$f --format=csv -lms 1000 > $o/smi.csv 2>&1 &
smi=$!
(cd .new-src && /tmp/b3/ddpbench accept --soak 8m --interval 60s --json $o/soak.json --csv $o/soak.csv --prom $o/soak.prom \
   --failed-hosts $o/drain.txt --progress log) > $o/soak.txt 2>&1
echo "soak rc=$?"
kill $smi; wait $smi 2>/dev/null
nvidia-smi -q > $o/smi-q-full-after.txt 2>&1
nvidia-smi -q -d ECC,PERFORMANCE,TEMPERATURE,ROW_REMAPPER > $o/smi-q-after.txt 2>&1
tail -22 $o/soak.txt
cp $o/soak.txt $o/soak.json $OUT/
cd $o && tar czf $OUT/call3.tgz *
echo "total: $(( $(date +%s) - t0 )) s"
