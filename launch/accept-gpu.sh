#!/usr/bin/env bash
# accept-gpu.sh: on a GPU machine, from the project root: `ddpbench accept` beside PyTorch at the same shapes, in one call, so
# that the per-GPU figures can be checked against an independent measurement:
#   - the sustained GEMM (bf16, fp16, tf32, fp32; n = 8192; --health-seconds each) vs torch.matmul, same method;
#   - pinned H2D/D2H (256 MiB) vs a PyTorch pinned copy;
#   - ddpbench accept twice, PyTorch between them (interleaved), and the default job's wall time and exit code.
# Logs and result files go to $OUT (or ./accept-gpu-logs). Needs the gpu build (launch/gpu-check.sh build).
#   launch/accept-gpu.sh [seconds per precision, default 5]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-accept-gpu-logs}
secs=${1:-5}
mkdir -p "$out"
[ -f .device-deps/env.sh ] && source .device-deps/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
bin=build/gpu/ddpbench
[ -x "$bin" ] || { echo "no $bin: run launch/gpu-check.sh build first" >&2; exit 1; }
ngpu=$(nvidia-smi -L | wc -l)
np=$(( ngpu >= 2 ? 2 : 1 ))
nvidia-smi -L | tee "$out/machine.txt"
nvidia-smi -q -d PERFORMANCE,POWER,ECC 2>&1 | head -80 >>"$out/machine.txt"
run_accept() {
  echo "== mpirun -np $np $bin accept --health-seconds $secs --json $out/accept-$1.json --failed-hosts $out/failed-$1.txt --force"
  local t0; t0=$(date +%s.%N)
  mpirun -np $np $bin accept --health-seconds "$secs" --json "$out/accept-$1.json" \
    --failed-hosts "$out/failed-$1.txt" --force 2>&1 | tee "$out/accept-$1.txt"
  local rc=${PIPESTATUS[0]}
  echo "exit $rc, wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" | tee -a "$out/accept-$1.txt"
}
run_accept a
echo "== python3 launch/accept_ref.py --seconds $secs --n 8192 --copy-mib 256"
python3 launch/accept_ref.py --seconds "$secs" --n 8192 --copy-mib 256 --json "$out/pytorch.json" 2>&1 | tee "$out/pytorch.txt"
run_accept b
echo "== the default job: mpirun -np $np $bin with no options (the GPU-sized acceptance job), wall time and verdict"
t0=$(date +%s.%N)
mpirun -np $np $bin >"$out/default.txt" 2>"$out/default.err"
rc=$?
echo "exit $rc, wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" | tee -a "$out/default.txt"
grep -E "^# default GPU|^# model|^# steps|^# findings|^#   (fail|warn)|^ +(local|comm|ddp) |^# ddpbench accept|^hosts:|wall" "$out/default.txt"
