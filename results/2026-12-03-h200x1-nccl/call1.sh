#!/usr/bin/env bash
# Call 1: NCCL's own logs on the H200, captured with the build before the account existed (733a703), to learn
# and test the parser on real lines: training, accept (its split groups), collectives; NCCL 2.28.3 (system)
# and 2.28.9 (the machine's PyTorch); TUNING/COLL on one run to see the per-call lines' shape.
set -uo pipefail
src=${1:-.old-src}
out=${OUT:-/tmp/out}
(cd "$src" && cmake --preset gpu >/dev/null && cmake --build --preset gpu -j16 >/dev/null 2>&1) || { echo build failed; exit 1; }
bin=$src/build/gpu/ddpbench
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TRANSPORT,NET
cap() { local name=$1; shift; NCCL_DEBUG_FILE=$out/$name.%p.log "$@" > $out/$name.stdout 2>&1; echo "$name rc=$?"; }
cap h200-train mpirun -np 1 --bind-to none $bin --steps 20 --warmup 3 --peak-seconds 0 --progress none
cap h200-coll mpirun -np 1 --bind-to none $bin collectives -b 8 -e 64M -f 8 -n 5 -w 2
cap h200-accept mpirun -np 1 --bind-to none $bin accept --progress none
NCCL_DEBUG_SUBSYS=INIT,GRAPH,TRANSPORT,NET,TUNING,COLL cap h200-tuning mpirun -np 1 --bind-to none $bin collectives -b 8 -e 64M -f 64 -n 1 -w 1
if [ -n "${DDPBENCH_ALT_NCCL_DIR:-}" ]; then
  LD_LIBRARY_PATH=$DDPBENCH_ALT_NCCL_DIR:$LD_LIBRARY_PATH cap h200-coll-2289 mpirun -np 1 --bind-to none -x LD_LIBRARY_PATH $bin collectives -b 8 -e 64M -f 8 -n 5 -w 2
fi
ls -la $out; for f in $out/*.log; do echo "== $f"; wc -l < $f; done
grep -h "NCCL version" $out/*.log | sort | uniq -c
