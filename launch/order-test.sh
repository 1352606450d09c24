#!/usr/bin/env bash
# launch/order-test.sh: does a phase's figure depend on what ran before it? (docs/steady.md)
# On a GPU machine, runs each of the five configs/h200-*.ini presets and h200-1024x32x1024-bf16 with --cuda-graph,
# phases local and ddp, with the measured peak (an 8192^3 GEMM sustained --peak-seconds 2) in three places:
#   after   the default: after every timed measurement
#   before  where it was before it moved after the phases (the test hook DDPBENCH_TEST_PEAK_FIRST=1)
#   off     --peak-seconds 0
# ROUNDS rounds (default 3), the order of the three rotated every round so that no mode always runs first. For each
# preset and phase: the median over rounds of each mode's median step time, each mode's A/A range (max - min over
# rounds), and the verdict: a mode agrees with `off` when their medians differ by at most max(the larger of the
# two A/A ranges, 0.5 %). Exit 0 when `after` agrees with `off` everywhere (what the design promises); `before`
# is reported, not required. Writes OUT/order.txt and every run's JSON and text under OUT/runs.
# usage: launch/order-test.sh DDPBENCH OUT [ROUNDS]
set -uo pipefail
bin=${1:?usage: launch/order-test.sh DDPBENCH OUT [ROUNDS]} out=${2:?usage: launch/order-test.sh DDPBENCH OUT [ROUNDS]}
rounds=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/runs"
presets="h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph"
modes=(after before off)
for ((r = 1; r <= rounds; r++)); do
  for p in $presets; do
    args="--config $here/configs/$p.ini"
    [ "$p" = graph ] && args="--config $here/configs/h200-1024x32x1024-bf16.ini --cuda-graph"
    for ((k = 0; k < 3; k++)); do
      m=${modes[$(((k + r - 1) % 3))]}
      [ -n "${ORDER_RESUME:-}" ] && [ -s "$out/runs/$p-$m-$r.json" ] && continue # ORDER_RESUME=1: keep done runs
      env=() extra=()
      [ "$m" = before ] && env=(DDPBENCH_TEST_PEAK_FIRST=1)
      [ "$m" = off ] && extra=(--peak-seconds 0)
      t=$(date +%s.%N)
      env "${env[@]}" "$bin" $args --phases local,ddp "${extra[@]}" --json "$out/runs/$p-$m-$r.json" --force \
        --progress none >"$out/runs/$p-$m-$r.txt" 2>&1
      echo "$p $m round $r: exit $? in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}") s"
    done
  done
done
python3 - "$out" "$rounds" $presets <<'PY' | tee "$out/order.txt"
import json, sys, statistics as st
out, rounds, presets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
bad = 0
print("preset phase: mode median-of-rounds ms (A/A range %) vs off; weights")
for p in presets:
    for ph in ("local", "ddp"):
        med, rng, sums, steady = {}, {}, set(), []
        for m in ("off", "after", "before"):
            v = []
            for r in range(1, rounds + 1):
                d = json.load(open("%s/runs/%s-%s-%d.json" % (out, p, m, r)))
                v.append(d["phases"][ph]["step_ms"]["median"]); sums.add(d["weights_checksum"])
                s = d["phases"][ph].get("steady")
                if s and not s["steady"]: steady.append("%s r%d %+.1f%%" % (m, r, s["drift_pct"]))
            med[m], rng[m] = st.median(v), (max(v) - min(v)) / st.median(v) * 100
        line = "%-24s %-5s off %.4f (%.2f%%)" % (p, ph, med["off"], rng["off"])
        for m in ("after", "before"):
            diff = (med[m] / med["off"] - 1) * 100
            tol = max(rng[m], rng["off"], 0.5)
            ok = abs(diff) <= tol
            if m == "after" and not ok: bad += 1
            line += " | %s %.4f (%.2f%%) %+.2f%% %s tol %.2f%%" % (m, med[m], rng[m], diff, "agrees" if ok else "DIFFERS", tol)
        line += " | weights " + ",".join(sorted(sums))
        if steady: line += " | not steady: " + "; ".join(steady)
        print(line)
print("after vs off: %s (%d differ)" % ("PASS" if bad == 0 else "FAIL", bad))
sys.exit(1 if bad else 0)
PY
