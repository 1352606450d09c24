#!/usr/bin/env bash
# gpu-check.sh: on a GPU machine, from the project root: build with the gpu preset, run every test (the gpu-labelled ones
# run there, not on CI), an end-to-end run on the GPUs, and compute-sanitizer's memcheck on a small run.
# Logs go to $OUT (or ./gpu-check-logs). Exit code: non-zero if any step failed.
#   launch/gpu-check.sh            # everything
#   launch/gpu-check.sh build      # just configure and build
set -uo pipefail
case "${1:-all}" in all | build) ;; *) echo "launch/gpu-check.sh: argument must be 'build' or nothing, got '$1'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-logs}
mkdir -p "$out"
[ -f .device-deps/env.sh ] && source .device-deps/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
fail=0
step() { echo "== $*"; }

step "machine"
nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -12
step "configure and build (gpu preset, sm_90)"
cmake --preset gpu >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset gpu >"$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
[ "${1:-all}" = build ] && exit 0

step "tests (all labels)"
ctest --preset gpu 2>&1 | tee "$out/ctest.log" | grep -E "Test +#|tests passed|tests failed|Failed|Skipped|^# " || true
grep -q "100% tests passed" "$out/ctest.log" || fail=1
ngpu=$(nvidia-smi -L | wc -l)
np=$(( ngpu >= 2 ? 2 : 1 ))
step "end to end: mpirun -np $np on the GPUs"
mpirun -np $np build/gpu/ddpbench --config configs/ci.ini --json "$out/e2e-ci.json" --force >"$out/e2e.log" 2>&1 || fail=1
tail -25 "$out/e2e.log"
step "compute-sanitizer memcheck, one rank, small runs"
# NCCL's initialisation probes kernels of other architectures and gets API errors by design; memcheck is
# about memory accesses, so API errors are not reported here.
for args in "--comm mpi --precision fp16 --cuda-graph --inject-nonfinite 3" \
            "--comm nccl --precision bf16 --gradient-as-bucket-view --momentum 0.9" "--comm nccl --precision fp32"; do
  compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 build/gpu/ddpbench \
    --config configs/ci.ini --device cuda --progress none $args >"$out/memcheck.log" 2>&1
  rc=$?
  echo "memcheck $args: $(grep -E "ERROR SUMMARY" "$out/memcheck.log") (exit $rc)"
  [ $rc -eq 0 ] || { fail=1; grep -E "=========" "$out/memcheck.log" | head -30; }
done
step "topology: ddpbench topo, and doctor on $np ranks"
build/gpu/ddpbench topo >"$out/topo.txt" 2>&1; echo "topo exit $?"
mpirun -np $np build/gpu/ddpbench doctor --topo-xml "$out" >"$out/doctor.txt" 2>&1; echo "doctor exit $?"
exit $fail
