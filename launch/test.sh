#!/usr/bin/env bash
# Builds (launch/setup.sh) and runs every test with CTest (labels unit, mpi, cli, multinode, gpu: the folders of
# tests/; gpu tests exit 77, shown as skipped, when no GPU is visible; multinode tests need root and exit 77 where
# namespaces are refused).
# Installs what the multinode tests need (tests/multinode/install.sh) first. This is what CI runs (.ci/run).
# Then the sanitizer job: the `sanitize` preset (clang, Debug, AddressSanitizer + UndefinedBehaviorSanitizer)
# builds everything again into build/sanitize and runs the unit, mpi and cli tests there, and each libFuzzer target
# for DDPBENCH_FUZZ_SECONDS (default 60) over its committed corpus. DDPBENCH_SANITIZE=0 skips the sanitizer job
# (a quick local check). Exit code: 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.."
# Test-only helpers from Debian, installed before the configure step (which looks for Python): scipy, the
# oracle for compare's statistics (tests/unit/compare_oracle.py); jsonschema, the JSON Schema check of result
# files (test_schema); promtool, node_exporter and Matplotlib for the exporters and plots (test_prom, test_plot).
missing=""
/usr/bin/python3 -c 'import scipy' 2>/dev/null || missing="$missing python3-scipy"
python3 -c "import jsonschema" 2>/dev/null || missing="$missing python3-jsonschema"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing="$missing python3-matplotlib"
command -v promtool >/dev/null || missing="$missing prometheus"
command -v prometheus-node-exporter >/dev/null || missing="$missing prometheus-node-exporter"
if [ -n "$missing" ] && [ "$(id -u)" -eq 0 ]; then
  echo "ddpbench: installing$missing (test-only)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
launch/setup.sh || exit 1
tests/multinode/install.sh || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail=0
ctest --preset dev || fail=1
if [ "${DDPBENCH_SANITIZE:-1}" != 0 ]; then
  secs=${DDPBENCH_FUZZ_SECONDS:-60}
  case "$secs" in '' | *[!0-9]*) echo "launch/test.sh: DDPBENCH_FUZZ_SECONDS must be a number of seconds" >&2; exit 2 ;; esac
  if cmake --preset sanitize -DDDPBENCH_FUZZ_SECONDS="$secs" >/dev/null && cmake --build --preset sanitize; then
    ctest --preset sanitize || fail=1
    ctest --preset fuzz || fail=1
  else
    fail=1
  fi
fi
exit $fail
