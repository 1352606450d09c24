#!/usr/bin/env bash
# Call 1 of 2026-12-06 (run as `source .device-deps/env.sh && bash diag.sh` from the repository root, tree 82ffc4c
# plus the untracked golden, .device-deps carried): bisects test_gpu's "mpi fsdp: CUDA graph replay is bitwise the
# eager run" failure with the CLI (2 MPI ranks on the one GPU, small model), then makes the FSDP2 goldens.
set -uo pipefail
source .device-deps/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
o=/tmp/diag; rm -rf $o; mkdir -p $o
(cmake -S . -B /tmp/d --preset gpu >/dev/null && cmake --build /tmp/d --target ddpbench -j 16) > $o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
echo "built ${SECONDS}s"
(timeout 170 python3 tests/data/golden/gen_fsdp_golden.py --out "$OUT/golden" > $o/golden.log 2>&1; echo "golden rc $?" > $o/golden.rc) &
cmp() { python3 - "$@" <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
def tp(d): return "fsdp" if "fsdp" in d["phases"] else "ddp"
la=a["phases"][tp(a)]["loss"]; lb=b["phases"][tp(b)]["loss"]
first=next((i for i,(x,y) in enumerate(zip(la,lb)) if x!=y), None)
print("%-34s eager %s graph %s %s first loss diff at step %s of %d; eager %r graph %r" % (sys.argv[3], a.get("weights_checksum"), b.get("weights_checksum"),
  "SAME" if a.get("weights_checksum")==b.get("weights_checksum") else "DIFF", first, len(la), la[first] if first is not None else None, lb[first] if first is not None else None))
PY
}
run() { # tag np args...
  local tag=$1 np=$2; shift 2
  timeout 60 mpirun -q -np $np /tmp/d/ddpbench --hidden 64 --layers 4 --batch 32 --steps 10 --warmup 2 --warmup-seconds 0 --peak-seconds 0 --force --quiet "$@" --json $o/$tag.json > $o/$tag.txt 2>&1 || { echo "$tag rc $?"; tail -3 $o/$tag.txt; }
}
for comm in mpi; do for st in fsdp ddp; do for p in fp32 bf16 fp16; do for m in 0 0.9; do
  t=$comm-$st-$p-m$m
  run $t-e 2 --comm $comm --strategy $st --precision $p --momentum $m
  run $t-g 2 --comm $comm --strategy $st --precision $p --momentum $m --cuda-graph
  cmp $o/$t-e.json $o/$t-g.json $t
done; done; done; done
for extra in "--grad-comm bf16" "--layers 3" "--phases fsdp" "--phases comm,fsdp" "--steps 3 --warmup 0"; do
  t="mpi-fsdp-bf16-m0.9 $extra"; f=$(echo "$t" | tr -c 'a-z0-9.\n' _)
  run $f-e 2 --comm mpi --strategy fsdp --precision bf16 --momentum 0.9 $extra
  run $f-g 2 --comm mpi --strategy fsdp --precision bf16 --momentum 0.9 --cuda-graph $extra
  cmp $o/$f-e.json $o/$f-g.json "$t"
done
run np1-e 1 --comm mpi --strategy fsdp --precision bf16 --momentum 0.9
run np1-g 1 --comm mpi --strategy fsdp --precision bf16 --momentum 0.9 --cuda-graph
cmp $o/np1-e.json $o/np1-g.json "mpi np1 fsdp bf16 m0.9"
echo "runs done ${SECONDS}s"
wait; cat $o/golden.rc; tail -3 $o/golden.log
(cd $o && tar czf $OUT/diag.tgz *.json *.txt *.log)
echo "end ${SECONDS}s"
