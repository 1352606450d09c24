#!/usr/bin/env bash
# GPU call 6 of 2026-12-01 on nvidia-h200 (1 x H200), from the project root with .device-deps and .old-src
# (git archive 409b753, the tree before this session's issue-10 work) carried: builds old and new, runs the
# gpu-labelled tests and the default job's test, an interleaved old/new comparison (the watchdog now records
# every NCCL call and host wait: is the step any slower?), accept and collectives on the GPU (watchdog,
# preflight), and a stopped rank on the GPU (2 ranks, --comm mpi: NCCL refuses two ranks on one GPU).
# Everything lands in $OUT/r/.
set -uo pipefail
source .device-deps/env.sh
o=$OUT/r; mkdir -p $o
(cd .old-src && cmake --preset gpu && cmake --build --preset gpu --target ddpbench) >$o/build-old.log 2>&1 &
{ cmake --preset gpu && cmake --build --preset gpu; } >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
wait
b=build/gpu/ddpbench
nvidia-smi -L
ctest --preset gpu -L gpu --output-on-failure >$o/ctest-gpu.txt 2>&1; echo "ctest -L gpu: rc=$?"
grep -E "Test +#|tests passed" $o/ctest-gpu.txt
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
t0=$(date +%s); mpirun -np 1 $b accept --health-seconds 2 --json $o/accept.json >$o/accept.txt 2>&1
echo "accept: rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "hosts:|TFLOP|GB/s" $o/accept.txt | head -12
mpirun -np 1 $b accept --health-seconds 2 --json /dev/null --force >$o/accept-devnull.txt 2>&1
echo "accept --json /dev/null: rc=$? (want 2)"; head -2 $o/accept-devnull.txt
$b collectives all -b 8 -e 128M -f 8 >$o/coll-all.txt 2>&1; echo "collectives all: rc=$?"
grep -E "Avg bus|Out of bounds" $o/coll-all.txt | head -10
t0=$(date +%s)
DDPBENCH_TEST_FAULT=stop:1:ddp mpirun -np 2 -x DDPBENCH_TEST_FAULT $b --comm mpi --config configs/ci.ini --timeout 10 \
  --quiet >$o/stop-gpu.txt 2>&1
echo "stopped rank on the GPU: rc=$? (want 3) after $(( $(date +%s) - t0 )) s"; grep -E "timeout:|SUSPECT|alive" $o/stop-gpu.txt | head -8
ctest --preset gpu -R "test_default_job|test_gpu_default" --output-on-failure >$o/ctest-default.txt 2>&1
echo "default job tests: rc=$?"; grep -E "Test +#|tests passed" $o/ctest-default.txt
echo done
