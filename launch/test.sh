#!/usr/bin/env bash
# Builds (launch/setup.sh) and runs every test with CTest (labels unit, mpi, multinode, gpu; gpu tests exit 77,
# shown as skipped, when no GPU is visible; multinode tests need root and exit 77 where namespaces are refused).
# Installs what the multinode tests need (tests/multinode/install.sh) first. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
launch/setup.sh
tests/multinode/install.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset dev
