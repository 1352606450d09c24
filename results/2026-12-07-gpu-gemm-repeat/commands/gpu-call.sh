#!/usr/bin/env bash
# One device call: how much one GPU's sustained GEMM moves between runs (the between-time spread the GPU model's
# default assumes). Builds the tree (cmake --preset gpu), then 10 runs of `accept` on the one GPU, each with
# --health-seconds 2 and only the GEMMs, back to back; per run and precision the median TFLOP/s, its first and last
# second. Run from the repository root: `source .device-deps/env.sh && bash results/2026-12-07-gpu-gemm-repeat/commands/gpu-call.sh`.
set -uo pipefail
o=/tmp/gr; rm -rf $o; mkdir -p $o
cmake --preset gpu >$o/cfg.log 2>&1 && cmake --build --preset gpu --target ddpbench -j 16 >$o/build.log 2>&1 ||
  { tail -30 $o/cfg.log $o/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee $OUT/gpu.txt
for i in $(seq 1 10); do
  build/gpu/ddpbench accept --health-seconds 2 --skip copy,p2p,node,pairs --json $o/a$i.json --force >$o/a$i.txt 2>&1
  rc=$?
  python3 - "$o/a$i.json" "$i" "$rc" <<'PY' | tee -a $OUT/gemm.txt
import json, sys
d = json.load(open(sys.argv[1])); v = {}
for r in d.get('records', []):
    if r.get('measurement') == 'accept' and r.get('metric', '').startswith('gemm_') and r['metric'].endswith('_tflops'):
        v[r['metric']] = r['value']
out = []
for p in ('bf16', 'fp16', 'tf32', 'fp32'):
    out.append('%s %.2f [%.2f %.2f]' % (p, v.get('gemm_%s_tflops' % p, float('nan')),
               v.get('gemm_%s_first_tflops' % p, float('nan')), v.get('gemm_%s_last_tflops' % p, float('nan'))))
print('run %s rc=%s  ' % (sys.argv[2], sys.argv[3]) + '  '.join(out))
PY
done
cp $o/a1.txt $OUT/accept-run1.txt
python3 - $OUT/gemm.txt <<'PY' | tee $OUT/summary.txt
import math, re, statistics, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('run')]
for p in ('bf16', 'fp16', 'tf32', 'fp32'):
    xs = [float(re.search(p + r' ([0-9.naN]+)', l).group(1)) for l in rows]
    xs = [x for x in xs if x == x]
    if len(xs) < 3: continue
    lg = [math.log(x) for x in xs]; m = statistics.median(lg)
    mad = 1.4826 * statistics.median([abs(a - m) for a in lg])
    print('%s: n %d, median %.2f TFLOP/s, min %.2f max %.2f, robust sd of log %.2f %%, sd %.2f %%' % (
        p, len(xs), math.exp(m), min(xs), max(xs), 100 * mad, 100 * statistics.stdev(lg)))
PY
echo done
