#!/usr/bin/env bash
# setup.sh: set-up on a fresh Debian/Ubuntu machine: installs the distribution packages ddpbench needs (when missing;
# needs root), then configures and builds with the `dev` preset into build/dev. Safe to run again.
# The CUDA toolkit is not installed here: when nvcc is on the machine, the CUDA device and NCCL comm are
# built too; otherwise ddpbench runs on the CPU device.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhwloc-dev libcjson-dev libinih-dev libopenblas-dev"
# clang and its runtime libraries (ASan, UBSan, libFuzzer) for the sanitize preset that launch/test.sh runs
pkgs="$pkgs clang libclang-rt-dev"
missing=""
for p in $pkgs; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "ddpbench: missing packages:$missing (install them, or run this as root)" >&2
    exit 1
  fi
  echo "ddpbench: installing$missing" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
[ -x /usr/local/cuda/bin/nvcc ] && case ":$PATH:" in *:/usr/local/cuda/bin:*) ;; *) export PATH=$PATH:/usr/local/cuda/bin ;; esac
cmake --preset dev >/dev/null
cmake --build --preset dev
