#!/usr/bin/env bash
# GPU call 5 of 2026-12-01 on nvidia-h200 (1 x H200), after the GPU default job's learning-rate fix: the default
# job's tests and `mpirun -np 1 ddpbench` with no options, as users type it.
source .device-deps/env.sh && { cmake --preset gpu && cmake --build --preset gpu; } >/tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
ctest --preset gpu -R "test_default_job|test_gpu_default" -V 2>&1 | grep -E "^[0-9]+: (#|FAIL|[0-9]+ passed)|tests passed" | tee $OUT/ctest-default-job.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; t0=$(date +%s)
mpirun -np 1 build/gpu/ddpbench >$OUT/default-job.txt 2>&1; echo "mpirun -np 1 ddpbench: exit $? after $(( $(date +%s) - t0 )) s" | tee -a $OUT/default-job.txt
