#!/usr/bin/env bash
# GPU call 2 (issue 25: NCCL's account): old (f7994bb, before it; carried as .old-src) and new (carried as
# .new-src) alternated A B A B on the five configs/h200-*.ini presets and h200-1024x32x1024-bf16 --cuda-graph
# (--peak-seconds 0 on both), then one round of C: the new build with NCCL_DEBUG=WARN set by the "user", so that
# NCCL logs nothing and the account is "not reported" (the timings with and without the logging). Per run: exit
# code, wall time, weights checksum, final ddp loss, each phase's step median and settle seconds, and (new) what
# the JSON's nccl section says. Builds go to /tmp/bld-{old,new} so that a warm machine keeps them for call 3.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/o2; rm -rf $o; mkdir -p $o
(cmake -S .old-src -B /tmp/bld-old --preset gpu >/dev/null && cmake --build /tmp/bld-old --target ddpbench -j 8) >$o/build-old.log 2>&1 &
(cmake -S .new-src -B /tmp/bld-new --preset gpu >/dev/null && cmake --build /tmp/bld-new -j 8) >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=/tmp/bld-old/ddpbench new=/tmp/bld-new/ddpbench
[ -x $old ] || { echo "old build failed"; tail -20 $o/build-old.log; exit 1; }
ls -la /tmp/bld-new/libddpbench-nccl-profiler.so
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv | tee $OUT/gpu.txt
one() { # side round config
  local s=$1 round=$2 c=$3 bin=$new envs=""
  [ $s = A ] && bin=$old
  [ $s = C ] && envs="NCCL_DEBUG=WARN"
  if [ $c = graph ]; then args="--config configs/h200-1024x32x1024-bf16.ini --cuda-graph"; else args="--config configs/$c.ini"; fi
  local t=$(date +%s.%N)
  env $envs $bin $args --peak-seconds 0 --json $o/$c-$s$round.json --force --quiet >$o/$c-$s$round.txt 2>&1
  local rc=$?
  local w=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}")
  python3 -c "
import json,sys; d=json.load(open('$o/$c-$s$round.json')); ph=d['phases']; n=d.get('nccl')
acc=n and n['ranks'][0]['account']
print('%-24s %s%d rc=$rc wall $w s weights %s loss %r' % ('$c', '$s', $round, d['weights_checksum'], ph['ddp']['loss'][-1]),
      ' '.join('%s %.4f [%.2f s]' % (p, ph[p]['step_ms']['median'], ph[p].get('settle_seconds', -1)) for p in ('local','comm','ddp')),
      '| nccl', 'absent' if not n else ('reported %s ch %s' % (acc['version'], acc['communicators'][0]['channels']['coll']) if acc else 'not reported: ' + n['why'][:60]))" | tee -a $OUT/table.txt
}
configs="h200-8192x8x8192-bf16 h200-8192x8x8192-fp16 h200-4096x16x4096-bf16 h200-8192x8x1024-bf16 h200-1024x32x1024-bf16 graph"
for round in 1 2; do for c in $configs; do for s in A B; do one $s $round $c; done; done; done
for c in $configs; do one C 1 $c; done
cp $o/graph-B1.json $OUT/graph-new.json; cp $o/graph-C1.json $OUT/graph-nolog.json
echo done
