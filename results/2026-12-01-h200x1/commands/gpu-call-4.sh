#!/usr/bin/env bash
# GPU call 4 of 2026-12-01 on nvidia-h200 (1 x H200), from the project root with .device-deps carried: the final
# tree of the session. gpu-labelled tests and the default/acceptance tests; the GPU default job as users type
# it (issue 12); the scaling sweep's 1-rank row with --prom/--csv (issue 15); non-finite weights (exit 5) and a
# stopped rank named by the watchdog (issue 10). Everything lands in $OUT/r4.tgz.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r4; mkdir -p $o
{ cmake --preset gpu && cmake --build --preset gpu; } >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
b=build/gpu/ddpbench
ctest --preset gpu -L gpu -R "gpu|default" --output-on-failure >$o/ctest-gpu.txt 2>&1; echo "ctest gpu: rc=$?"
ctest --preset gpu -R "test_default_job|test_gpu_default|test_gpu$|test_run$" --output-on-failure >$o/ctest-default.txt 2>&1; echo "ctest default/run: rc=$?"
grep -E "Test +#|tests passed" $o/ctest-gpu.txt $o/ctest-default.txt
t0=$(date +%s.%N); mpirun -np 1 $b --json $o/default.json >$o/default.txt 2>$o/default.err; rc=$?
echo "default GPU job: exit $rc, wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
head -3 $o/default.txt; grep -E "^hosts:|measured peak|^   (local|comm|ddp) " $o/default.txt
mpirun -np 1 $b --config configs/h200-8192x8x1024-bf16.ini --sweep --json $o/sweep.json --prom $o/sweep.prom --csv $o/sweep.csv >$o/sweep.txt 2>&1; echo "sweep: rc=$?"
grep -iE -A4 "scaling" $o/sweep.txt | head -12; grep -c "^ddpbench_" $o/sweep.prom
$b --config configs/ci.ini --precision bf16 --inject-nonfinite 2 --quiet >$o/nonfinite.txt 2>&1; echo "nonfinite: rc=$? (want 5)"; grep -E "verification|nonfinite" $o/nonfinite.txt | head -3
t0=$(date +%s); DDPBENCH_TEST_FAULT=stop:1:ddp mpirun -np 2 -x DDPBENCH_TEST_FAULT $b --config configs/ci.ini --comm mpi --timeout 10 --quiet >$o/stop.txt 2>&1; echo "stopped rank: rc=$? (want 3) after $(( $(date +%s) - t0 )) s"; grep -E "SUSPECT" $o/stop.txt | head -3
tar czf $OUT/r4.tgz -C /tmp r4
