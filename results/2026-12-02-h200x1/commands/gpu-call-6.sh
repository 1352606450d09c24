#!/usr/bin/env bash
# Call 6 (issue 23, figures): build the gpu preset, run the GPU tests whose output the figure rules touch, and
# the text of one default-sized run, a 1024x32x1024 graph run and a run with a wrong --peak-tflops on the H200.
# Run from the project root on the GPU machine: source .device-deps/env.sh && bash results/2026-12-02-h200x1/commands/gpu-call-6.sh
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
out=${OUT:-call6}
mkdir -p "$out"
cmake --preset gpu >"$out/configure.log" 2>&1 && cmake --build --preset gpu >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
ctest --test-dir build/gpu -R "test_report|test_result|test_export|test_default_job|test_gpu_default|test_gpu$|test_run$" \
  --output-on-failure 2>&1 | tee "$out/ctest.log" | grep -E "Test +#|tests passed|FAIL"
for a in "--config configs/h200-8192x8x1024-bf16.ini --steps 40" \
         "--config configs/h200-1024x32x1024-bf16.ini --cuda-graph --steps 200" \
         "--config configs/h200-8192x8x1024-bf16.ini --steps 20 --peak-tflops 10"; do
  echo "== ddpbench $a"
  build/gpu/ddpbench $a --json "$out/run-$(echo "$a" | md5sum | cut -c1-6).json" 2>&1 | sed -n '/measured peak/,/verification/p'
done | tee "$out/runs.txt"
