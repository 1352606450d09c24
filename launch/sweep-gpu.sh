#!/usr/bin/env bash
# sweep-gpu.sh: on a GPU machine, from the project root: the scaling sweep on every visible GPU with the JSON, the
# node_exporter textfile and the CSV, the textfile checked with promtool when it is installed, and the plots
# when Matplotlib is. Builds with the gpu preset first unless build/gpu/ddpbench exists. Output in $OUT (or
# ./sweep-gpu-out). One GPU gives the 1-rank row only (it still runs the CUDA and NCCL path).
#   launch/sweep-gpu.sh [CONFIG]        # default configs/h200-8192x8x1024-bf16.ini
set -uo pipefail
cd "$(dirname "$0")/.."
cfg=${1:-configs/h200-8192x8x1024-bf16.ini}
[ -f "$cfg" ] || { echo "sweep-gpu.sh: no config $cfg" >&2; exit 2; }
out=${OUT:-sweep-gpu-out}
mkdir -p "$out"
[ -f .device-deps/env.sh ] && { set +e; source .device-deps/env.sh; set -uo pipefail; }
if [ ! -x build/gpu/ddpbench ]; then
  cmake --preset gpu >"$out/configure.log" 2>&1 && cmake --build --preset gpu >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log" "$out/configure.log" 2>/dev/null; exit 1; }
fi
ngpu=$(nvidia-smi -L | wc -l)
[ "$ngpu" -ge 1 ] || { echo "sweep-gpu.sh: no GPU visible" >&2; exit 77; }
name=$(basename "$cfg" .ini)-sweep-${ngpu}gpu
rm -f "$out/$name".{json,prom,csv}
launch/run.sh -np "$ngpu" --config "$cfg" --sweep --progress none --json "$out/$name.json" --prom "$out/$name.prom" \
  --csv "$out/$name.csv" >"$out/$name.txt" 2>"$out/$name.err"
rc=$?
sed -n '/scaling sweep/,/busbw: GB/p' "$out/$name.txt"
echo "ddpbench exit code $rc (0 pass, 1 a finding failed); output in $out/$name.{txt,json,prom,csv}"
[ $rc -le 1 ] || { tail -20 "$out/$name.err"; exit $rc; }
if command -v promtool >/dev/null; then promtool check metrics <"$out/$name.prom" && echo "promtool: ok"; fi
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  MPLBACKEND=Agg /usr/bin/python3 launch/plot.py --ddpbench build/gpu/ddpbench --out "$out/plots" "$out/$name.json"
fi
exit $rc
