#!/usr/bin/env bash
# GPU calls 10 and 11 of 2026-12-01 on nvidia-h200 (16 CPU cores; the GPU is not used), third session: the long
# run of the hwloc-XML fuzz target at the session's final code (37d9422), 15 libFuzzer workers for 480 s a call.
# The binary was built on the build machine (`cmake --preset sanitize`: clang 14, -fsanitize=fuzzer,address,
# undefined, with the target's 16 MiB ASan quarantine) and carried in .fuzz-carry/; here it loads this
# machine's libhwloc (Ubuntu 24.04's 2.10.0). The corpus lives in build/fz-hwloc (kept between calls while the
# machine stays warm); each call's logs land in $OUT/fuzz-hwloc-PASS.tgz and the sum of the workers'
# executions is printed. Usage: gpu-call-10.sh PASS [SECONDS] (pass 1: 480 s, pass 2: 330 s).
set -uo pipefail
source .device-deps/env.sh
pass=${1:-1} secs=${2:-480}
root=$PWD; w=$root/build/fz-hwloc; mkdir -p $w/corpus $w/p$pass; cd $w/p$pass
echo "corpus before this pass: $(ls $w/corpus | wc -l) inputs"
ldd $root/.fuzz-carry/fuzz_hwloc_xml | grep -E "hwloc|not found"
timeout 560 $root/.fuzz-carry/fuzz_hwloc_xml -jobs=15 -workers=15 -max_total_time=$secs -timeout=30 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix=$w/p$pass/art- $w/corpus $root/tests/fuzz/corpus/hwloc_xml >main.log 2>&1
echo "fuzzer: rc=$?"
grep -h "^stat::number_of_executed_units" fuzz-*.log | awk '{s += $2; n++} END {print "workers", n, "executions", s}'
for f in fuzz-*.log; do echo "$f $(grep -h '^stat::number_of_executed_units' $f | awk '{print $2}') execs, $(grep -h '^stat::average_exec_per_sec' $f | awk '{print $2}')/s, $(grep -cE 'ERROR|runtime error|deadly signal' $f) errors"; done
grep -h "^stat::slowest_unit_time_sec\|^stat::peak_rss_mb" fuzz-*.log | sort | uniq -c | sort -rn | head -4
grep -lE "ERROR|runtime error|deadly signal|Test unit written" fuzz-*.log | head; ls art-* 2>/dev/null | head
echo "corpus after: $(ls $w/corpus | wc -l) inputs"
tar czf $OUT/fuzz-hwloc-$pass.tgz main.log fuzz-*.log $(ls art-* 2>/dev/null)
