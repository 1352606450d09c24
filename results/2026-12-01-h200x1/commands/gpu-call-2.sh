#!/usr/bin/env bash
# GPU call 2 of 2026-12-01 on nvidia-h200 (1 x H200), from the project root with .device-deps and .old-src
# (git archive 2b6ba33, the code before issue 9) carried: builds old and new, runs the gpu-labelled tests, the
# collectives checks of issue 14, an interleaved old/new comparison (issue 9: results unchanged) and the
# acceptance measurements beside PyTorch (launch/accept-gpu.sh, issue 12). Everything lands in $OUT/r.tgz.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r; mkdir -p $o
(cd .old-src && cmake --preset gpu && cmake --build --preset gpu) >$o/build-old.log 2>&1 &
{ cmake --preset gpu && cmake --build --preset gpu; } >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
wait
b=build/gpu/ddpbench
nvidia-smi -L; git log --oneline -1 2>/dev/null
ctest --preset gpu -L gpu --output-on-failure >$o/ctest-gpu.txt 2>&1; echo "ctest -L gpu: rc=$?"
grep -E "Test +#|tests passed" $o/ctest-gpu.txt
$b collectives all -d all -o all -b 8 -e 128M -f 8 >$o/coll-all.txt 2>&1; echo "collectives all types/ops: rc=$?"
$b collectives all -b 8 -e 128M -f 4 -G 10 >$o/coll-graph.txt 2>&1; echo "collectives -G 10: rc=$?"
$b collectives allreduce -b 1M -e 1G -f 4 --under-load gemm:8192 >$o/coll-load.txt 2>&1; echo "under load: rc=$?"
DDPBENCH_TEST_CORRUPT_COLLECTIVE=0:5 $b collectives -b 1M -e 1M >$o/coll-corrupt.txt 2>&1; echo "corrupt hook: rc=$? (want 1)"
mpirun -np 2 --oversubscribe build/gpu/tests/test_collectives cuda >$o/coll-mpi2.txt 2>&1; echo "2 ranks staged mpi: rc=$?"
grep -E "wrong|Avg bus|Out of bounds" $o/coll-*.txt | head -20
for i in 1 2 3; do for s in old new; do
  bin=$b; [ $s = old ] && bin=.old-src/build/gpu/ddpbench
  $bin --config configs/h200-8192x8x1024-bf16.ini --json $o/oldnew-$s$i.json --force --quiet >$o/oldnew-$s$i.txt 2>&1
  echo "$s$i rc=$?"
done; done
python3 - $o <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/oldnew-*.json")):
    d = json.load(open(f)); ph = d["phases"]
    print(os.path.basename(f), d["weights_checksum"], ph["ddp"]["loss"][-1],
          *("%s %.3f" % (p, ph[p]["step_ms"]["median"]) for p in ("local", "comm", "ddp")))
PY
OUT=$o/accept launch/accept-gpu.sh 3 >$o/accept-gpu.txt 2>&1; echo "accept-gpu: rc=$?"
grep -E "exit|wall|hosts:|TFLOP|GB/s" $o/accept-gpu.txt | head -40
tar czf $OUT/r.tgz -C /tmp r
