#!/usr/bin/env bash
# Builds (launch/setup.sh) and runs every test with CTest (labels unit, mpi, multinode, gpu; gpu tests exit 77,
# shown as skipped, when no GPU is visible; multinode tests need root and exit 77 where namespaces are refused).
# Installs what the multinode tests need (tests/multinode/install.sh) first. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# Test-only helpers from Debian, installed before the configure step (which looks for Python): scipy, the
# oracle for compare's statistics (tests/compare/oracle.py); jsonschema, the JSON Schema check of result
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
launch/setup.sh
tests/multinode/install.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset dev
