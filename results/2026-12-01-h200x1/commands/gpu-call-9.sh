#!/usr/bin/env bash
# GPU call 9 of 2026-12-01 on nvidia-h200 (1 x H200), third session, from the project root with .device-deps and
# .old-src (git archive 30e1c5f, the tree before this session) carried. The session changed GPU-side code in
# comm_nccl.c (each NCCL collective is recorded raw for the watchdog instead of through vsnprintf) and the
# watchdog (job-wide progress, the board written by the watchdog thread). Builds old and new, runs the
# gpu-labelled tests and the watchdog and default-job tests, old/new interleaved 3 times on the 8192 x 8 x 1024
# preset (same weights? same step?), the small-message allreduce old/new twice (host cost per NCCL call), and
# a stopped rank on the GPU (2 ranks, --comm mpi: NCCL refuses two ranks on one GPU). Output in $OUT/r/.
set -uo pipefail
source .device-deps/env.sh
o=$OUT/r; mkdir -p $o
(cd .old-src && cmake --preset gpu && cmake --build --preset gpu --target ddpbench) >$o/build-old.log 2>&1 &
{ cmake --preset gpu && cmake --build --preset gpu; } >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
wait
b=build/gpu/ddpbench old=.old-src/build/gpu/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; }
nvidia-smi -L
ctest --preset gpu -L gpu --output-on-failure >$o/ctest-gpu.txt 2>&1; echo "ctest -L gpu: rc=$?"
ctest --preset gpu -R "test_watchdog|test_default_job|test_gpu_default" --output-on-failure >$o/ctest-more.txt 2>&1
echo "test_watchdog, test_watchdog_job, default job tests: rc=$?"
grep -hE "Test +#|tests passed" $o/ctest-gpu.txt $o/ctest-more.txt
for i in 1 2 3; do for s in old new; do
  bin=$b; [ $s = old ] && bin=$old
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
for i in 1 2; do for s in old new; do
  bin=$b; [ $s = old ] && bin=$old
  $bin collectives allreduce -b 8 -e 1M -f 4 -n 2000 -w 100 >$o/coll-$s$i.txt 2>&1; echo "collectives $s$i rc=$?"
done; done
echo "per-call p50 (us) out-of-place, by size: old | new"
for i in 1 2; do for s in old new; do
  printf '%s%s ' $s $i; awk '/^ +[0-9]+ +[0-9]+ +float/ {printf "%s:%s ", $1, $14}' $o/coll-$s$i.txt; echo
done; done
t0=$(date +%s)
DDPBENCH_TEST_FAULT=stop:1:ddp mpirun -np 2 -x DDPBENCH_TEST_FAULT $b --comm mpi --config configs/ci.ini --timeout 10 \
  --quiet >$o/stop-gpu.txt 2>&1
echo "stopped rank on the GPU: rc=$? (want 3) after $(( $(date +%s) - t0 )) s"; grep -E "timeout:|SUSPECT|alive" $o/stop-gpu.txt | head -8
echo done
