#!/usr/bin/env bash
# bench.sh: speed benchmarks on H100/H200 machines, ddpbench beside PyTorch in the same call (machines are shared and
# noisy: compare within one run). From the project root, after `launch/gpu-check.sh build`:
#   launch/bench.sh one [CONFIG...]   # 1 GPU: ddpbench local phase vs PyTorch eager, per config
#   launch/bench.sh two [CONFIG...]   # 2 GPUs: ddpbench (local, comm, ddp) vs PyTorch DDP and its no-DDP run
# CONFIG names a configs/h200-*.ini preset without the extension (default: all of them). Results (JSON and
# logs) go to $OUT (or ./bench-results); a table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-one}
shift || true
case "$mode" in one | two) ;; *) echo "launch/bench.sh: mode must be one or two, got '$mode'" >&2; exit 2 ;; esac
for c in "$@"; do [ -f "configs/$c.ini" ] || { echo "launch/bench.sh: no preset configs/$c.ini" >&2; exit 2; }; done
out=${OUT:-bench-results}
mkdir -p "$out"
[ -f .device-deps/env.sh ] && source .device-deps/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16)
bin=build/gpu/ddpbench
table="$out/table-$mode.txt"
: >"$table"
key() { sed -n "s/^$1 *= *\([^ ;]*\).*/\1/p" "configs/$2.ini" | head -1; }
jq_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
for c in "${configs[@]}"; do
  H=$(key hidden "$c") L=$(key layers "$c") B=$(key batch "$c") P=$(key precision "$c") LR=$(key lr "$c")
  extra=""
  [ "$H" = 1024 ] && extra="--cuda-graph"
  if [ "$mode" = one ]; then
    export CUDA_VISIBLE_DEVICES=0
    $bin --config "configs/$c.ini" --phases local $extra --json "$out/$c-ddpbench-1gpu.json" --force --progress none \
      >"$out/$c-ddpbench-1gpu.log" 2>&1 || { echo "ddpbench failed: $c"; tail -20 "$out/$c-ddpbench-1gpu.log"; }
    [ -n "$extra" ] && $bin --config "configs/$c.ini" --phases local --json "$out/$c-ddpbench-1gpu-eager.json" --force \
      --progress none >"$out/$c-ddpbench-1gpu-eager.log" 2>&1
    python3 launch/pytorch_ref.py --hidden "$H" --layers "$L" --batch "$B" --precision "$P" --lr "${LR:-0.01}" \
      --json "$out/$c-pytorch-1gpu.json" >"$out/$c-pytorch-1gpu.log" 2>&1 || tail -5 "$out/$c-pytorch-1gpu.log"
    d=$(jq_py "$out/$c-ddpbench-1gpu.json" "d['phases']['local']['step_ms']['median']")
    pk=$(jq_py "$out/$c-ddpbench-1gpu.json" "d['measured_peak_tflops']")
    tf=$(jq_py "$out/$c-ddpbench-1gpu.json" "d['phases']['local']['tflops_per_rank']")
    e="-"; [ -n "$extra" ] && e=$(jq_py "$out/$c-ddpbench-1gpu-eager.json" "d['phases']['local']['step_ms']['median']")
    t=$(jq_py "$out/$c-pytorch-1gpu.json" "d['median_ms']")
    python3 -c "print(f'{\"$c\":26s} ddpbench {float(\"$d\"):8.3f} ms (eager $e)  pytorch {float(\"$t\"):8.3f} ms  ratio {float(\"$t\")/float(\"$d\"):5.2f}x  {float(\"$tf\"):6.1f} TFLOP/s of measured GEMM peak {float(\"$pk\"):6.1f} ({100*float(\"$tf\")/float(\"$pk\"):.1f} %)')" | tee -a "$table"
  else
    unset CUDA_VISIBLE_DEVICES
    mpirun -np 2 $bin --config "configs/$c.ini" $extra --json "$out/$c-ddpbench-2gpu.json" --force --progress none \
      >"$out/$c-ddpbench-2gpu.log" 2>&1 || { echo "ddpbench failed: $c"; tail -20 "$out/$c-ddpbench-2gpu.log"; }
    torchrun --nproc_per_node 2 launch/pytorch_ref.py --hidden "$H" --layers "$L" --batch "$B" --precision "$P" --lr "${LR:-0.01}" \
      --json "$out/$c-pytorch-2gpu.json" >"$out/$c-pytorch-2gpu.log" 2>&1 || tail -5 "$out/$c-pytorch-2gpu.log"
    torchrun --nproc_per_node 2 launch/pytorch_ref.py --hidden "$H" --layers "$L" --batch "$B" --precision "$P" --lr "${LR:-0.01}" \
      --no-ddp --json "$out/$c-pytorch-2gpu-local.json" >"$out/$c-pytorch-2gpu-local.log" 2>&1 || true
    python3 - "$out" "$c" <<'PY' | tee -a "$table"
import json, sys
o, c = sys.argv[1], sys.argv[2]
d = json.load(open(f"{o}/{c}-ddpbench-2gpu.json"))
ph = d["phases"]
try:
    pt = json.load(open(f"{o}/{c}-pytorch-2gpu.json"))["median_ms"]
    pl = json.load(open(f"{o}/{c}-pytorch-2gpu-local.json"))["median_ms"]
    ptxt = f"pytorch ddp {pt:8.3f} no-ddp {pl:8.3f} eff {100 * pl / pt:5.1f} %"
except Exception as e:
    ptxt = f"pytorch: {e}"
rows = ph["comm"].get("allreduce", [])
bw = " ".join(f"{r['bytes'] / 2**20:.0f}MiB:{r['busbw_gbs']:.0f}" if r["busbw_gbs"] is not None else "-" for r in rows)
rows_d = ph["ddp"].get("allreduce", [])
bwd = " ".join(f"{r['bytes'] / 2**20:.0f}MiB:{r['busbw_gbs']:.0f}" if r["busbw_gbs"] is not None else "-" for r in rows_d)
print(f"{c:26s} ddpbench local {ph['local']['step_ms']['median']:8.3f} ddp {ph['ddp']['step_ms']['median']:8.3f} "
      f"eff {100 * d['scaling_efficiency']:5.1f} % | {ptxt} | busbw GB/s comm [{bw}] in-ddp [{bwd}]")
PY
  fi
done
echo "== $mode"
cat "$table"
