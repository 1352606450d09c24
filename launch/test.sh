#!/usr/bin/env bash
# launch/test.sh [--full]: set-up (launch/setup.sh: packages, configure, build into build/dev; the multinode
# tests' Slurm and tools: tests/multinode/install.sh; the test-only Python helpers), then CTest.
#
#   launch/test.sh          the unit, mpi, cli, multinode and gpu tests, in parallel where CTest may (tests that
#                           time links or steps hold the cores alone), except those labelled slow (over 30 s on
#                           the 2-core build machine): about 7 minutes there once the packages are cached.
#   launch/test.sh --full   every test (the slow ones too), then the sanitizer job: the `sanitize` preset (clang,
#                           Debug, AddressSanitizer + UndefinedBehaviorSanitizer) builds everything again into
#                           build/sanitize and runs the unit, mpi and cli tests there, then each libFuzzer target
#                           for DDPBENCH_FUZZ_SECONDS (default 60) over its committed corpus. What CI runs (.ci/run).
#
# gpu tests exit 77 (shown as skipped) when no GPU is visible; multinode tests exit 77 when not root or where the
# kernel refuses network namespaces. Exit code: 0 when every step passed, 2 on a bad argument.
set -uo pipefail
cd "$(dirname "$0")/.."
full=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "launch/test.sh: unknown argument '$a' (launch/test.sh [--full])" >&2; exit 2 ;;
  esac
done
secs=${DDPBENCH_FUZZ_SECONDS:-60}
case "$secs" in '' | *[!0-9]*) echo "launch/test.sh: DDPBENCH_FUZZ_SECONDS must be a number of seconds" >&2; exit 2 ;; esac
t0=$(date +%s)
# Test-only helpers from Debian, installed before the configure step (which looks for Python): scipy, the
# oracle for compare's statistics (tests/unit/compare_oracle.py); jsonschema, the JSON Schema check of result
# files (test_schema); promtool, node_exporter and Matplotlib for the exporters and plots (test_prom, test_plot);
# pandas, which reads compare's CSV as it is (test_compare_report).
# Chromium, the browser that renders launch/report.py's page (test_report).
missing=""
/usr/bin/python3 -c 'import scipy' 2>/dev/null || missing="$missing python3-scipy"
python3 -c "import jsonschema" 2>/dev/null || missing="$missing python3-jsonschema"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing="$missing python3-matplotlib"
/usr/bin/python3 -c "import pandas" 2>/dev/null || missing="$missing python3-pandas"
command -v promtool >/dev/null || missing="$missing prometheus"
command -v prometheus-node-exporter >/dev/null || missing="$missing prometheus-node-exporter"
command -v chromium >/dev/null || missing="$missing chromium"
if [ -n "$missing" ] && [ "$(id -u)" -eq 0 ]; then
  echo "ddpbench: installing$missing (test-only)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
launch/setup.sh || exit 1
tests/multinode/install.sh || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
jobs=$(nproc 2>/dev/null || echo 2)
fail=0
if [ $full = 1 ]; then
  ctest --preset dev -j "$jobs" || fail=1
  if cmake --preset sanitize -DDDPBENCH_FUZZ_SECONDS="$secs" >/dev/null && cmake --build --preset sanitize; then
    ctest --preset sanitize -j "$jobs" || fail=1
    ctest --preset fuzz || fail=1
  else
    fail=1
  fi
else
  ctest --preset quick -j "$jobs" || fail=1
fi
echo "launch/test.sh$([ $full = 1 ] && echo ' --full'): $([ $fail = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t0 )) s"
exit $fail
