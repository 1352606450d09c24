#!/usr/bin/env bash
# Builds (launch/setup.sh) and runs every test with CTest (labels unit, mpi, gpu; gpu tests exit 77, shown as
# skipped, when no GPU is visible). This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# Test-only Python helper: the JSON Schema check of result files (test_schema); before the
# configure step, which looks for Python.
if ! python3 -c "import jsonschema" 2>/dev/null && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-jsonschema >/dev/null
fi
# Test-only tools for the exporters and the plots (tests/test_prom.py, tests/test_plot.py): promtool,
# node_exporter and Matplotlib from Debian. Without them those tests are skipped (exit 77).
if [ "$(id -u)" -eq 0 ] && { ! command -v promtool >/dev/null || ! command -v prometheus-node-exporter >/dev/null ||
                             ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; }; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    prometheus prometheus-node-exporter python3-matplotlib >/dev/null
fi
launch/setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset dev
