#!/usr/bin/env bash
# GPU call 3 of 2026-12-02 on nvidia-h200 (1 x H200), after call 2 found test_run, test_collectives_cli and
# test_accept_run failing there (they start 2-4 ranks; two of them did not ask for the CPU device, and NCCL takes one
# GPU per rank). First the exact failing test_run case by hand, with its findings (which second failing finding?),
# then the three tests again after the fix, with the gpu-labelled tests. Output: $OUT/*.txt.
set -uo pipefail
source .device-deps/env.sh
{ cmake --preset gpu && cmake --build --preset gpu; } >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
b=build/gpu/ddpbench
DDPBENCH_TEST_CORRUPT_RANK=2 mpirun -np 3 --oversubscribe -x DDPBENCH_TEST_CORRUPT_RANK $b --config configs/ci.ini \
  --device cpu --phases ddp --quiet --json /tmp/corrupt.json >$OUT/corrupt-run.txt 2>&1
echo "corrupt run (old test_run arguments): rc=$? (want 1)"
grep -E "^#   (fail|warn)" $OUT/corrupt-run.txt
ctest --preset gpu -R "test_run$|test_collectives_cli|test_accept_run|test_gpu$|test_collectives_gpu|test_conformance_gpu" \
  --output-on-failure >$OUT/ctest.txt 2>&1
echo "ctest rc=$?"; grep -hE "Test +#|tests passed" $OUT/ctest.txt
