#!/usr/bin/env bash
# GPU call 3 of 2026-12-01 on nvidia-h200 (1 x H200), from the project root with .device-deps carried: the NCCL
# A/B of issue 13 (system NCCL 2.28.3 against the 2.28.9 inside PyTorch, $DDPBENCH_ALT_NCCL_DIR) with
# launch/ab.sh, ABBA, 6 runs a side, plus an A/A of each; and collectives --under-load again after the fix that
# enqueues the GEMMs first. Everything lands in $OUT/r3.tgz.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r3; mkdir -p $o
{ cmake --preset gpu && cmake --build --preset gpu; } >$o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
echo "alt NCCL: $DDPBENCH_ALT_NCCL_DIR"; ls $DDPBENCH_ALT_NCCL_DIR
build/gpu/ddpbench collectives allreduce -b 1M -e 1G -f 4 --under-load gemm:8192 >$o/coll-load.txt 2>&1; echo "under load: rc=$?"
C="--config configs/h200-8192x8x1024-bf16.ini"
launch/ab.sh -n 6 --b-ld "$DDPBENCH_ALT_NCCL_DIR" --out $o/ab-nccl-2.28.3-vs-2.28.9 -- $C >$o/ab.txt 2>&1; echo "A/B exit $?"
launch/ab.sh --aa -n 6 --out $o/aa-nccl-2.28.3 -- $C >$o/aa-2.28.3.txt 2>&1; echo "A/A 2.28.3 exit $?"
launch/ab.sh --aa -n 6 --a-ld "$DDPBENCH_ALT_NCCL_DIR" --out $o/aa-nccl-2.28.9 -- $C >$o/aa-2.28.9.txt 2>&1; echo "A/A 2.28.9 exit $?"
cat $o/ab-nccl-2.28.3-vs-2.28.9/compare.txt
tar czf $OUT/r3.tgz -C /tmp r3
