#!/usr/bin/env bash
# fsdp-gpu.sh: the fsdp strategy's measurements on the H200, in two device calls of under 10 minutes
# each (docs/fsdp.md; the device README: a call builds, runs and tars its results into $OUT).
#
#   launch/fsdp-gpu.sh ab     old (.old-src) and new (.new-src) builds A B A B on the five configs/h200-*.ini
#                             presets and 1024x32x1024 with --cuda-graph, strategy ddp (the change touched the
#                             engine's step loop): step times and weights checksums, table.txt
#   launch/fsdp-gpu.sh fsdp   the new build: each preset under --strategy fsdp next to --strategy ddp (the fsdp
#                             section's memory figures included), PyTorch's FSDP2 and DDP steps on the same models
#                             (launch/pytorch_ref.py), the FSDP2 goldens (tests/data/golden/gen_fsdp_golden.py),
#                             ctest -L gpu
#
# Run from the repository root of the device's copy, with .device-deps, .old-src and .new-src carried (git archive
# of the two commits: `git archive OLD | tar -x -C .old-src`). Writes $OUT/PART.tgz and $OUT/table.txt.
set -uo pipefail
part=${1:?usage: launch/fsdp-gpu.sh ab|fsdp}
source .device-deps/env.sh
o=/tmp/fsdp-$part
rm -rf "$o"
mkdir -p "$o"
# the card and driver this call got (the kinds lent may give an H100 for an H200)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/card: /' | tee -a "$OUT/table.txt"
build() { # build SRC DIR [TARGET...]: every target when none is named (ctest -L gpu needs them all)
  local src=$1 dir=$2
  shift 2
  (cmake -S "$src" -B "$dir" --preset gpu >/dev/null && cmake --build "$dir" ${1:+--target "$@"} -j 8) \
    >"$o/build-$(basename "$dir").log" 2>&1
}
presets="h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph"
args_of() { # preset -> ddpbench arguments
  if [ "$1" = graph ]; then echo "--config configs/h200-1024x32x1024-bf16.ini --cuda-graph"; else echo "--config configs/$1.ini"; fi
}
summary() { # JSON tag -> one line: the training phase's and the others' medians, weights, memory
  python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); ph = d["phases"]; tp = "fsdp" if "fsdp" in ph else "ddp"
line = "%-40s rc %s weights %s loss %r " % (sys.argv[2], d.get("exit_code"), d.get("weights_checksum"), ph[tp]["loss"][-1])
line += " ".join("%s %.4f" % (p, ph[p]["step_ms"]["median"]) for p in ("local", "comm", tp) if p in ph)
f = d.get("fsdp")
if f:
    m = f["memory_bytes"]
    line += " | fsdp state+buffers %d B (allocated = plan: %s; device free memory fell %s B), ddp %d B" % (
        m["plan_per_rank"][0]["total"], m.get("allocated_matches_plan"), m.get("device_free_drop_rank0"), m["ddp"]["total"])
    # time_us is null where nothing was timed (inside a CUDA graph replay): '-'
    line += " | " + " ".join("%s %d x %s us" % (r["kind"], r["calls"], "-" if r.get("time_us") is None else "%.1f" % r["time_us"])
                             for r in ph[tp]["collectives"])
print(line)
EOF
}

if [ "$part" = ab ]; then
  build .old-src /tmp/fsdp-old ddpbench ddpbench_nccl_profiler &
  build .new-src /tmp/fsdp-new ddpbench ddpbench_nccl_profiler || { tail -30 "$o"/build-fsdp-new.log; exit 1; }
  wait
  [ -x /tmp/fsdp-old/ddpbench ] || { tail -30 "$o"/build-fsdp-old.log; exit 1; }
  for round in 1 2; do
    for c in $presets; do
      for s in A B; do
        bin=/tmp/fsdp-new/ddpbench; [ $s = A ] && bin=/tmp/fsdp-old/ddpbench
        (cd .new-src && $bin $(args_of $c) --peak-seconds 0 --json "$o/$c-$s$round.json" --force --quiet >"$o/$c-$s$round.txt" 2>&1)
        summary "$o/$c-$s$round.json" "$c $s$round" | tee -a "$OUT/table.txt"
      done
    done
  done
elif [ "$part" = fsdp ]; then
  # The cheap, needed-for-sure parts first (the GPU tests, the goldens), then the timed runs; each step has its
  # own timeout and the PyTorch runs are left out once the call nears its 10 minutes (table.txt says so).
  build .new-src /tmp/fsdp-new || { tail -30 "$o"/build-fsdp-new.log; exit 1; }
  echo "built at ${SECONDS}s" | tee -a "$OUT/table.txt"
  (cd /tmp/fsdp-new && timeout 150 ctest -L gpu --output-on-failure) >"$o/ctest-gpu.log" 2>&1
  echo "ctest -L gpu rc $? at ${SECONDS}s" | tee -a "$OUT/table.txt"
  tail -15 "$o/ctest-gpu.log"
  if [ "${FSDP_GPU_GOLDEN:-1}" = 1 ]; then # FSDP_GPU_GOLDEN=0: not made again (the committed one was made earlier)
    timeout 150 python3 .new-src/tests/data/golden/gen_fsdp_golden.py --out "$OUT/golden" >"$o/golden.log" 2>&1
    echo "gen_fsdp_golden rc $? at ${SECONDS}s" | tee -a "$OUT/table.txt"
  else
    echo "gen_fsdp_golden: not run (FSDP_GPU_GOLDEN=0)" | tee -a "$OUT/table.txt"
  fi
  bin=/tmp/fsdp-new/ddpbench
  for c in $presets; do
    for st in ddp fsdp; do
      (cd .new-src && timeout 90 $bin $(args_of $c) --strategy $st --peak-seconds 0 --json "$o/$c-$st.json" --force >"$o/$c-$st.txt" 2>&1)
      summary "$o/$c-$st.json" "$c $st" | tee -a "$OUT/table.txt"
    done
  done
  echo "ddpbench runs done at ${SECONDS}s" | tee -a "$OUT/table.txt"
  # PyTorch on the same models, in the same call (its eager step; FSDP2 on one process, DDP without a group)
  for m in "8192 8 8192 bf16" "8192 8 8192 fp16" "4096 16 4096 bf16" "8192 8 1024 bf16" "1024 32 1024 bf16"; do
    set -- $m
    for st in ddp fsdp; do
      if [ $SECONDS -gt ${FSDP_GPU_BUDGET_S:-500} ]; then echo "pytorch $1x$2x$3-$4 $st: not run (${SECONDS}s into the call)" | tee -a "$OUT/table.txt"; continue; fi
      extra=""; [ $st = ddp ] && extra="--no-ddp"
      timeout 90 python3 launch/pytorch_ref.py --hidden $1 --layers $2 --batch $3 --precision $4 --strategy $st $extra \
        --json "$o/torch-$1x$2x$3-$4-$st.json" >>"$o/torch.txt" 2>&1
      python3 -c "import json; d = json.load(open('$o/torch-$1x$2x$3-$4-$st.json')); print('pytorch %-22s %-4s median %.4f ms, max_memory_allocated %s' % ('$1x$2x$3-$4', '$st', d['median_ms'], d.get('max_memory_allocated_bytes')))" 2>&1 | tee -a "$OUT/table.txt"
    done
  done
  echo "pytorch runs done at ${SECONDS}s" | tee -a "$OUT/table.txt"
else
  echo "usage: launch/fsdp-gpu.sh ab|fsdp" >&2
  exit 2
fi
nvidia-smi -q > "$o/nvidia-smi-q.txt" 2>&1
(cd "$o" && tar czf "$OUT/$part.tgz" ./*.json ./*.txt ./*.log 2>/dev/null)
echo done
