#!/usr/bin/env bash
# GPU call 12 of 2026-12-01 on nvidia-h200 (1 x H200), third session: the session's final tree. Builds with the
# gpu preset, runs the gpu-labelled tests, the watchdog tests, the input reader's and the fault tests, and the
# default job's tests. Output in $OUT/.
set -uo pipefail
source .device-deps/env.sh
{ cmake --preset gpu && cmake --build --preset gpu; } >/tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
nvidia-smi -L
ctest --preset gpu -L gpu --output-on-failure >$OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu: rc=$?"
ctest --preset gpu -R "test_watchdog|test_atomic_file|test_faults|test_default_job|test_gpu_default" --output-on-failure \
  >$OUT/ctest-more.txt 2>&1
echo "watchdog, reader, fault and default job tests: rc=$?"
grep -hE "Test +#|tests passed" $OUT/ctest-gpu.txt $OUT/ctest-more.txt
