#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: `run.sh TARGET SECONDS WORKDIR SEEDDIR`. The committed seed
# corpus (real files, and every crash or timeout ever found, as regression inputs) is read first; new inputs
# go to WORKDIR (in the build tree), never into the source tree. Prints the executions and ends with
# "N passed, N failed"; a crash, timeout, leak or sanitizer report fails it and leaves the input in
# WORKDIR.artifacts/ (commit it to SEEDDIR once fixed).
set -u
bin=$1 secs=$2 work=$3 seeds=$4
[ -x "$bin" ] && [ -d "$seeds" ] || { echo "usage: run.sh TARGET SECONDS WORKDIR SEEDDIR" >&2; echo "0 passed, 1 failed"; exit 2; }
rm -rf "$work" "$work.artifacts"
mkdir -p "$work" "$work.artifacts"
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work.artifacts/" "$work" "$seeds" >"$work.log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work.log" | tail -1)
echo "$(basename "$bin"): ${execs:-?} executions in ${secs} s, exit $rc, corpus $(ls "$work" | wc -l) new + $(ls "$seeds" | wc -l) seeds"
if [ $rc -eq 0 ] && [ -z "$(ls -A "$work.artifacts")" ]; then
  echo "1 passed, 0 failed"
  exit 0
fi
grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$work.log" | head -20
ls -l "$work.artifacts"
echo "0 passed, 1 failed"
exit 1
