#!/usr/bin/env bash
# GPU call 2 (issue 23 §1): old and new builds alternated, then the GPU tests. From the project root with
# .device-deps and .old-src (git archive e478705, the tree before this change) carried.
#  A. ABAB, 2 rounds, on the five configs/h200-*.ini presets and h200-1024x32x1024-bf16 --cuda-graph, all
#     --peak-seconds 0: old = e478705, new = this tree at its defaults (2 s of each phase's workload first).
#     Per run: weights checksum, final ddp loss, local/comm/ddp step medians, settle seconds, steady drift.
#  B. ctest -L gpu and the GPU-relevant CLI tests on the new build.
# Output: $OUT/table.txt, $OUT/ctest-*.txt, $OUT/runs.tgz.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r; rm -rf $o; mkdir -p $o
(cd .old-src && cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 8) >$o/build-old.log 2>&1 &
{ cmake --preset gpu >/dev/null && cmake --build --preset gpu -j 16; } >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=build/gpu/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
cfgs="h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph"
for round in 1 2; do
  for c in $cfgs; do
    for s in A B; do
      bin=$new; [ $s = A ] && bin=$old
      if [ $c = graph ]; then args="--config configs/h200-1024x32x1024-bf16.ini --cuda-graph"; else args="--config configs/$c.ini"; fi
      t=$(date +%s.%N)
      $bin $args --peak-seconds 0 --json $o/$c-$s$round.json --force --quiet >$o/$c-$s$round.txt 2>&1
      rc=$?
      echo "$c $s$round rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}")"
    done
  done
done
python3 - $o <<'PY' | tee $OUT/table.txt
import json, sys, glob, os
print("run weights final_ddp_loss local/comm/ddp median ms [settle s] [steady drift %]")
for f in sorted(glob.glob(sys.argv[1] + "/*-[AB][12].json")):
    d = json.load(open(f)); ph = d["phases"]
    def extra(p):
        x = ph[p]; st = x.get("steady")
        s = "" if "settle_seconds" not in x else " [%.2f s]" % x["settle_seconds"]
        if st: s += " [%+.2f%%%s]" % (st["drift_pct"], "" if st["steady"] else " NOT STEADY")
        return s
    print("%-32s %s %-20s" % (os.path.basename(f), d.get("weights_checksum"), ph["ddp"]["loss"][-1]),
          *("%s %.4f%s" % (p, ph[p]["step_ms"]["median"], extra(p)) for p in ("local", "comm", "ddp")))
PY
ctest --preset gpu -L gpu --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu rc=$?"
ctest --preset gpu -R "test_default_job|test_gpu_default|test_device_plugin|test_watchdog|test_run$|test_steady" --output-on-failure > $OUT/ctest-more.txt 2>&1; echo "more rc=$?"
grep -hE "Test +#|tests passed" $OUT/ctest-gpu.txt $OUT/ctest-more.txt
tar -czf $OUT/runs.tgz -C /tmp r
echo done
