#!/usr/bin/env bash
# GPU call 7 of 2026-12-01 on nvidia-h200 (16 CPU cores; the GPU is not used): the long run of the hwloc-XML
# fuzz target (issue 10), 15 libFuzzer workers for 420 s over the committed seed corpus. The binary was built on
# the build machine (`cmake --preset sanitize`: clang 14, -fsanitize=fuzzer,address,undefined) and carried in
# .fuzz-carry/; here it loads this machine's libhwloc (Ubuntu 24.04's 2.10.0), not Debian 12's 2.9.0.
# The logs land in $OUT/fuzz-hwloc.tgz; the sum of the workers' executions is printed.
set -uo pipefail
source .device-deps/env.sh
root=$PWD; w=/tmp/fz; mkdir -p $w/corpus; cd $w
ldd $root/.fuzz-carry/fuzz_hwloc_xml | grep -E "hwloc|not found"
ls -l /usr/lib/x86_64-linux-gnu/libhwloc.so.15* 2>/dev/null
timeout 560 $root/.fuzz-carry/fuzz_hwloc_xml -jobs=15 -workers=15 -max_total_time=420 -timeout=30 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix=$w/art- corpus $root/tests/fuzz/corpus/hwloc_xml >main.log 2>&1
echo "fuzzer: rc=$?"
grep -h "^stat::number_of_executed_units" fuzz-*.log | awk '{s += $2; n++} END {print "workers", n, "executions", s}'
grep -h "^stat::slowest_unit_time_sec\|^stat::peak_rss_mb" fuzz-*.log | sort | uniq -c | sort -rn | head -4
grep -lE "ERROR|runtime error|deadly signal|Test unit written" fuzz-*.log | head; ls art-* 2>/dev/null | head
echo "corpus: $(ls corpus | wc -l) new inputs"
tar czf $OUT/fuzz-hwloc.tgz main.log fuzz-*.log $(ls art-* 2>/dev/null)
