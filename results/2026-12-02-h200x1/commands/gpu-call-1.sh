#!/usr/bin/env bash
# GPU call 1 of 2026-12-02 on nvidia-h200 (1 x H200), from the project root with .device-deps and .old-src
# (git archive 4b3775c: the tree before the redesign of issue 22) carried. Builds old and new side by side, then
# runs them alternately (A = old, B = new, per preset, 2 rounds: ABAB) on the five configs/h200-*.ini presets and
# on h200-1024x32x1024-bf16 with --cuda-graph, all with --peak-seconds 0, and prints per run the weights checksum,
# the final ddp loss and the local/comm/ddp step medians. Output: $OUT/summary.txt and $OUT/call1.tgz.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r; rm -rf $o; mkdir -p $o
(cd .old-src && cmake --preset gpu && cmake --build --preset gpu --target ddpbench) >$o/build-old.log 2>&1 &
{ cmake --preset gpu && cmake --build --preset gpu; } >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=build/gpu/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; exit 1; }
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
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
python3 - $o <<'PY' | tee $o/table.txt
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[AB][12].json")):
    d = json.load(open(f)); ph = d["phases"]
    print("%-32s %s %-18s" % (os.path.basename(f), d.get("weights_checksum"), ph["ddp"]["loss"][-1]),
          *("%s %.4f" % (p, ph[p]["step_ms"]["median"]) for p in ("local", "comm", "ddp")))
PY
cp $o/table.txt $OUT/summary.txt
tar -czf $OUT/call1.tgz -C /tmp r
echo done
