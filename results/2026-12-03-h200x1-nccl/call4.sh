#!/usr/bin/env bash
# GPU call 4 (issue 25), after calls 2-3 showed two defects (collectives and accept had no topology to check
# against; ddpbench's own NCCL_DEBUG_FILE was recorded and compared as the user's environment): the fixed build's
# doctor, collectives, accept and the GPU default job with --json, and compare of 2.28.3 against 2.28.9 again;
# also the choices line and the bucket-size probe after the phases (the tree of 987bba6).
# Every JSON comes back in one tarball for the schema check on the build machine.
set -uo pipefail
source .device-deps/env.sh
b=/tmp/bld4
(cmake -S .new-src -B $b --preset gpu >/dev/null && cmake --build $b -j 16 --target ddpbench ddpbench_nccl_profiler) >/tmp/b4.log 2>&1 || { tail -30 /tmp/b4.log; exit 1; }
new=$b/ddpbench; j=/tmp/j4; rm -rf $j; mkdir -p $j
cd .new-src
$new doctor --json $j/doctor.json > $OUT/doctor.txt 2>&1; echo "doctor rc=$?"
$new collectives -b 8 -e 64M -f 8 -n 20 -w 2 --json $j/collectives.json > $OUT/collectives.txt 2>&1; echo "collectives rc=$?"; grep -E "NCCL|nccl" $OUT/collectives.txt; tail -1 $OUT/collectives.txt
$new accept --json $j/accept.json > $OUT/accept.txt 2>&1; echo "accept rc=$?"; grep -E "NCCL|nccl " $OUT/accept.txt; tail -1 $OUT/accept.txt
t=$(date +%s); $new --json $j/default.json > $OUT/default-job.txt 2>&1; echo "default job rc=$? wall $(( $(date +%s) - t )) s"; grep -E "NCCL's|^#   world|nccl " $OUT/default-job.txt; tail -1 $OUT/default-job.txt
for i in 1 2; do
  $new collectives -b 1M -e 64M -f 4 -n 20 --json $j/cmp-a$i.json --quiet >/dev/null 2>&1
  LD_LIBRARY_PATH=$DDPBENCH_ALT_NCCL_DIR:$LD_LIBRARY_PATH $new collectives -b 1M -e 64M -f 4 -n 20 --json $j/cmp-b$i.json --quiet >/dev/null 2>&1
done
$new compare $j/cmp-a1.json $j/cmp-a2.json -- $j/cmp-b1.json $j/cmp-b2.json > $OUT/compare-2.28.3-vs-2.28.9.txt 2>&1; echo "compare rc=$?"
sed -n '/what differs/,/same on both/p;/NCCL.s account/,/^$/p' $OUT/compare-2.28.3-vs-2.28.9.txt
ls /tmp/ddpbench-nccl-* 2>/dev/null && echo "LEFT BEHIND: private dirs" || echo "no private NCCL log left in /tmp"
tar -C $j -czf $OUT/json.tar.gz .
echo done
