#!/usr/bin/env bash
# GPU call 8 of 2026-12-01 on nvidia-h200 (1 x H200): the session's final tree. Builds, runs the gpu-labelled
# tests, test_watchdog and the default job's tests, and the default job as users type it.
set -uo pipefail
source .device-deps/env.sh
{ cmake --preset gpu && cmake --build --preset gpu; } >/tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
git log --oneline -1 2>/dev/null; nvidia-smi -L
ctest --preset gpu -L gpu -R "test_" --output-on-failure >$OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu: rc=$?"
ctest --preset gpu -R "test_watchdog|test_default_job|test_gpu_default|test_expect" --output-on-failure >$OUT/ctest-more.txt 2>&1
echo "test_watchdog, test_expect, default job tests: rc=$?"
grep -hE "Test +#|tests passed" $OUT/ctest-gpu.txt $OUT/ctest-more.txt
t0=$(date +%s); mpirun -np 1 build/gpu/ddpbench >$OUT/default-job.txt 2>&1
echo "mpirun -np 1 ddpbench: exit $? after $(( $(date +%s) - t0 )) s"; grep -E "hosts:|verdict|MFU" $OUT/default-job.txt | head -5
