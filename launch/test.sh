#!/usr/bin/env bash
# Builds (launch/setup.sh) and runs every test with CTest (labels unit, mpi, gpu; gpu tests exit 77, shown as
# skipped, when no GPU is visible). This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
launch/setup.sh
# Test-only: Debian's scipy is the oracle for compare's statistics (tests/compare/oracle.py).
if ! /usr/bin/python3 -c 'import scipy' 2>/dev/null && [ "$(id -u)" -eq 0 ]; then
  echo "ddpbench: installing python3-scipy (test-only)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-scipy >/dev/null
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset dev
