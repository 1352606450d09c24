#!/usr/bin/env bash
# mpirun wrapper for the machine you are on: `launch/run.sh -np N [ddpbench options]`.
# Adds what Open MPI needs that nobody should have to remember: the root switches when run as root, and
# --oversubscribe when N is more than this machine's cores. The binary is build/gpu/ddpbench if built,
# else build/dev/ddpbench (or $DDPBENCH_BIN). Everything after -np N goes to ddpbench.
set -euo pipefail
cd "$(dirname "$0")/.."
np=1
if [ "${1:-}" = "-np" ] || [ "${1:-}" = "-n" ]; then np=$2; shift 2; fi
bin=${DDPBENCH_BIN:-}
[ -z "$bin" ] && for b in build/gpu/ddpbench build/dev/ddpbench; do [ -x "$b" ] && { bin=$b; break; }; done
[ -n "$bin" ] || { echo "ddpbench: not built yet: run launch/setup.sh first" >&2; exit 2; }
flags=()
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
[ "$np" -gt "$(nproc)" ] && flags+=(--oversubscribe)
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
exec mpirun -np "$np" "${flags[@]}" "$bin" "$@"
