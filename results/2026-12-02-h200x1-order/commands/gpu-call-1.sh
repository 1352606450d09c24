#!/usr/bin/env bash
# GPU call 1 (issue 23 §1, exploration): how long the step time takes to come back after the sustained peak
# GEMM that the run measures before its phases. HEAD e478705 built there; each config is run with the default
# --peak-seconds 2 and with --peak-seconds 0, long phases, per-step times kept from the JSON
# (per_rank[0].step_ms_samples). Output: $OUT/curves.txt and the JSONs.
set -uo pipefail
source .device-deps/env.sh
o=$OUT/c1; mkdir -p $o
{ cmake --preset gpu && cmake --build --preset gpu --target ddpbench -j 16; } >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
b=build/gpu/ddpbench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
run() { # name peak args...
  local n=$1 pk=$2; shift 2
  t=$(date +%s.%N)
  $b "$@" --peak-seconds $pk --json $o/$n-p$pk.json --force --quiet >$o/$n-p$pk.txt 2>&1
  echo "$n peak=$pk rc=$? wall=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}")"
}
for r in 1 2; do
  run graph$r 2 --config configs/h200-1024x32x1024-bf16.ini --cuda-graph --phases local,ddp --steps 4000
  run graph$r 0 --config configs/h200-1024x32x1024-bf16.ini --cuda-graph --phases local,ddp --steps 4000
  run big$r 2 --config configs/h200-8192x8x8192-bf16.ini --phases local,ddp --steps 120
  run big$r 0 --config configs/h200-8192x8x8192-bf16.ini --phases local,ddp --steps 120
  run mid$r 2 --config configs/h200-8192x8x1024-bf16.ini --phases local,ddp --steps 600
  run mid$r 0 --config configs/h200-8192x8x1024-bf16.ini --phases local,ddp --steps 600
done
python3 - $o <<'PY' | tee $OUT/curves.txt
import json, sys, glob, os, statistics as st
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f))
    for ph in ("local", "ddp"):
        s = d["phases"][ph]["per_rank"][0]["step_ms_samples"]
        n = len(s); k = 10  # ten windows: the median of each, and the cumulative time at its end
        w = [st.median(s[i*n//k:(i+1)*n//k]) for i in range(k)]
        tot = 0; ends = []
        for i in range(k): tot += sum(s[i*n//k:(i+1)*n//k]); ends.append(tot/1000)
        print("%-16s %-5s n=%d med=%.4f first20=%.4f windows:" % (os.path.basename(f)[:-5], ph, n, st.median(s), st.median(s[:20])),
              " ".join("%.4f@%.2fs" % (a, b) for a, b in zip(w, ends)))
PY
echo done
