#!/usr/bin/env bash
# run.sh: runs one libFuzzer target for a bounded time: `run.sh TARGET SECONDS WORKDIR SEEDDIR [REGRESSDIR]`. Every
# file in REGRESSDIR is run once first (inputs kept as regressions but left out of the seeds because each one
# is slow: the fuzzer would spend most of its time mutating them); then the committed seed corpus (real files,
# and every crash or timeout ever found, as regression inputs) is read and fuzzed. New inputs go to WORKDIR (in
# the build tree), never into the source tree. Prints the executions and ends with "N passed, N failed"; a
# crash, timeout, leak or sanitizer report fails it and leaves the input in WORKDIR.artifacts/ (commit it to
# SEEDDIR once fixed).
set -u
bin=$1 secs=$2 work=$3 seeds=$4 regress=${5:-}
[ -x "$bin" ] && [ -d "$seeds" ] || { echo "usage: run.sh TARGET SECONDS WORKDIR SEEDDIR [REGRESSDIR]" >&2; echo "0 passed, 1 failed"; exit 2; }
rm -rf "$work" "$work.artifacts"
mkdir -p "$work" "$work.artifacts"
pass=0 fail=0
if [ -n "$regress" ] && [ -d "$regress" ]; then
  files=("$regress"/*)
  "$bin" -timeout=60 -rss_limit_mb=2048 -artifact_prefix="$work.artifacts/" "${files[@]}" >"$work.regress.log" 2>&1
  rc=$?
  echo "$(basename "$bin"): ${#files[@]} regression inputs of $(basename "$regress")/ run once, exit $rc"
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); grep -E "ERROR|SUMMARY|runtime error|Running:" "$work.regress.log" | head -20; fi
fi
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work.artifacts/" "$work" "$seeds" >"$work.log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work.log" | tail -1)
echo "$(basename "$bin"): ${execs:-?} executions in ${secs} s, exit $rc, corpus $(ls "$work" | wc -l) new + $(ls "$seeds" | wc -l) seeds"
if [ $rc -eq 0 ] && [ -z "$(ls -A "$work.artifacts")" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$work.log" | head -20
  ls -l "$work.artifacts"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
