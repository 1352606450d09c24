#!/usr/bin/env bash
# run.sh: mpirun wrapper for the machine you are on: `launch/run.sh [-np N] [ddpbench options]`.
# Adds what Open MPI needs that nobody should have to remember: the root switches when run as root, and
# --oversubscribe when N is more than this machine's cores. The binary is build/gpu/ddpbench if built,
# else build/dev/ddpbench (or $DDPBENCH_BIN). Everything after -np N goes to ddpbench.
# Exit codes are ddpbench's (0 ok, 1 verification failed, 2 bad input, 3 runtime error); a bad -np is 2;
# SIGINT/SIGTERM to this script stop the job and exit 130/143 (mpirun itself would say 1); standard output
# closed early by its reader: 3, or the verdict's 1, 4 or 5.
set -euo pipefail
cd "$(dirname "$0")/.."
np=1
if [ "${1:-}" = "-np" ] || [ "${1:-}" = "-n" ]; then
  [ $# -ge 2 ] || { echo "launch/run.sh: $1 needs a number of ranks" >&2; exit 2; }
  np=$2
  shift 2
fi
case "$np" in
  '' | *[!0-9]* | 0*) echo "launch/run.sh: -np must be a positive integer, got '$np'" >&2; exit 2 ;;
esac
[ "$np" -le 100000 ] || { echo "launch/run.sh: -np $np is too many ranks" >&2; exit 2; }
bin=${DDPBENCH_BIN:-}
[ -z "$bin" ] && for b in build/gpu/ddpbench build/dev/ddpbench; do [ -x "$b" ] && { bin=$b; break; }; done
[ -n "$bin" ] || { echo "ddpbench: not built yet: run launch/setup.sh first" >&2; exit 2; }
[ -x "$bin" ] || { echo "launch/run.sh: DDPBENCH_BIN=$bin is not an executable" >&2; exit 2; }
flags=()
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
[ "$np" -gt "$(nproc)" ] && flags+=(--oversubscribe)
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
# mpirun in the background so that a signal to this script reaches it and our exit code says which signal.
# The traps come first, so that a signal at any moment is kept (a loaded machine may deliver one before
# mpirun's pid is known: it is then passed on right after).
sig=0 pid=
trap 'sig=130; [ -n "$pid" ] && kill -TERM $pid 2>/dev/null' INT # (bash starts background jobs with SIGINT ignored)
trap 'sig=143; [ -n "$pid" ] && kill -TERM $pid 2>/dev/null' TERM
# Standard output, when it is not a terminal, goes through a relay: a reader that closes early (`| head`) would
# make mpirun abort on SIGPIPE (exit 141 or a crash, the other outputs unwritten). The relay keeps draining
# after EPIPE, so the job ends as it would, and the lost output is an output failure: exit 3, or the verdict's
# when that is 1, 4 or 5 (as ddpbench itself does, docs/reliability.md).
relay_dir='' relay_pid=''
. launch/relay.sh # cwd is the repository root (cd above)
if [ ! -t 1 ]; then
  relay_start
  exec 3>"$relay_dir/out"
else
  exec 3>&1
fi
# -q: Open MPI's help text after a rank's non-zero exit would follow every clear one-line error
mpirun -q -np "$np" "${flags[@]}" "$bin" "$@" >&3 3>&- &
pid=$!
exec 3>&-
[ $sig -ne 0 ] && kill -TERM $pid 2>/dev/null
rc=0
while :; do
  wait $pid && rc=0 || rc=$?
  kill -0 $pid 2>/dev/null || break # wait returned because of a trapped signal: keep waiting for mpirun
done
[ -n "$relay_pid" ] && relay_finish launch/run.sh
[ $sig -ne 0 ] && exit $sig
exit $rc
