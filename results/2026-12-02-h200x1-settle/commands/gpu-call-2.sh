#!/usr/bin/env bash
# GPU call 2 (settle fix), on a fresh machine (both trees built again, as in call 1): the GPU default job
# (`mpiexec -np 1 ddpbench`, no options: training plus accept) with the old and the new build, A B, wall
# time and each phase's settle seconds; then ctest -L gpu and test_default_job on the new build.
# Output: $OUT/default.txt (a line per run as it ends), $OUT/ctest-*.txt.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/s2; rm -rf $o; mkdir -p $o
(cd .old-src && cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 8) >$o/build-old.log 2>&1 &
{ cmake --preset gpu >/dev/null && cmake --build --preset gpu -j 8; } >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=build/gpu/ddpbench
[ -x $old ] && [ -x $new ] || { echo "builds missing"; tail -20 $o/build-old.log; exit 1; }
for round in 1; do
  for s in A B; do
    bin=$new; [ $s = A ] && bin=$old
    t=$(date +%s.%N)
    (cd $o && mpiexec --allow-run-as-root -np 1 $OLDPWD/$bin --json $o/default-$s$round.json >$o/default-$s$round.txt 2>&1)
    rc=$?
    w=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t}")
    python3 -c "
import json; d=json.load(open('$o/default-$s$round.json')); ph=d['phases']
print('default $s$round rc=$rc wall $w s weights %s' % d.get('weights_checksum'),
      ' '.join('%s %.4f ms [settle %.2f s, %d steps]' % (p, ph[p]['step_ms']['median'], ph[p].get('settle_seconds', -1), ph[p]['step_ms']['n']) for p in ph))" 2>&1 | tee -a $OUT/default.txt
  done
done
ctest --preset gpu -L gpu --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest -L gpu rc=$?" | tee -a $OUT/default.txt
ctest --preset gpu -R "test_default_job" --output-on-failure > $OUT/ctest-more.txt 2>&1; echo "more rc=$?" | tee -a $OUT/default.txt
grep -hE "Test +#|tests passed|default acceptance job took" $OUT/ctest-gpu.txt $OUT/ctest-more.txt
echo done
