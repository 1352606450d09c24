#!/usr/bin/env bash
# run-hosts.sh: multi-node mpirun for ddpbench: `launch/run-hosts.sh HOSTFILE [--ppn N] [--iface IF] [ddpbench options]`.
# Adds the switches Open MPI needs across hosts that nobody should have to remember, prints the mpirun line
# it runs, and runs it:
#   -q                         Open MPI's own notices off, so that an error (or a failed acceptance, exit 4)
#                              ends with ddpbench's one line, not with mpirun's 11-line block
#   --hostfile HOSTFILE        one line per host ("node17 slots=8"); ddpbench must be at the same path on
#                              every host (a shared file system), as must the libraries it was built with
#   --map-by ppr:N:node        N ranks per host, one per GPU (--ppn; default: this host's GPU count from
#                              nvidia-smi, else the hostfile's slots)
#   --bind-to none             ddpbench binds each rank near its own GPU itself (--bind auto)
#   -x NCCL_* -x DDPBENCH_* -x PATH -x LD_LIBRARY_PATH   ranks on other hosts get the launcher's values
#                              (Open MPI passes no environment to remote hosts unless told)
#   --iface IF                 pins both networks to one interface (name or, for MPI only, a CIDR):
#                              --mca btl_tcp_if_include IF --mca oob_tcp_if_include IF -x NCCL_SOCKET_IFNAME=IF
#                              (an NCCL_SOCKET_IFNAME already in the environment wins for NCCL)
# DDPBENCH_MPIRUN_ARGS adds mpirun switches (word-split), DDPBENCH_BIN picks the binary, DDPBENCH_DRY_RUN=1
# prints the line without running it. Everything after the wrapper's own options goes to ddpbench.
# -h, --help: this text.
set -euo pipefail
usage() { echo "usage: launch/run-hosts.sh HOSTFILE [--ppn N] [--iface IF] [ddpbench options]" >&2; exit 2; }
case "${1:-}" in -h|--help) sed -n '2,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
[ $# -ge 1 ] || usage
hostfile=$1
shift
[ -r "$hostfile" ] || { echo "ddpbench: hostfile $hostfile: cannot read it" >&2; exit 2; }
ppn="" iface=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ppn) [ $# -ge 2 ] || usage; ppn=$2; shift 2 ;;
    --iface) [ $# -ge 2 ] || usage; iface=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
case "$ppn" in ""|*[!0-9]*|0) [ -z "$ppn" ] || { echo "ddpbench: --ppn $ppn: want a positive integer" >&2; exit 2; } ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DDPBENCH_BIN:-}
[ -z "$bin" ] && for b in "$root/build/gpu/ddpbench" "$root/build/dev/ddpbench"; do [ -x "$b" ] && { bin=$b; break; }; done
[ -n "$bin" ] || { echo "ddpbench: not built yet: run launch/setup.sh first" >&2; exit 2; }
if [ -z "$ppn" ] && command -v nvidia-smi >/dev/null; then
  ppn=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  [ "$ppn" -gt 0 ] || ppn=""
fi

export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
args=(-q --hostfile "$hostfile" --bind-to none)
[ -n "$ppn" ] && args+=(--map-by "ppr:$ppn:node")
[ "$(id -u)" -eq 0 ] && args+=(--allow-run-as-root)
if [ -n "$iface" ]; then
  args+=(--mca btl_tcp_if_include "$iface" --mca oob_tcp_if_include "$iface")
  export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-$iface}
fi
for v in $(compgen -e | grep -E '^(NCCL_|DDPBENCH_)' | grep -vE '^DDPBENCH_(MPIRUN_ARGS|DRY_RUN|BIN)$'); do args+=(-x "$v"); done
for v in PATH LD_LIBRARY_PATH; do [ -n "${!v:-}" ] && args+=(-x "$v"); done
# shellcheck disable=SC2206 # word-split on purpose: extra mpirun switches
extra=(${DDPBENCH_MPIRUN_ARGS:-})
cmd=(mpirun "${args[@]}" "${extra[@]}" "$bin" "$@")
echo "# ${cmd[*]}" >&2
[ "${DDPBENCH_DRY_RUN:-0}" = 1 ] && exit 0
[ -t 1 ] && exec "${cmd[@]}"
# Standard output that is not a terminal goes through a relay that keeps draining after its reader closed it
# (`| head`): mpirun would abort on SIGPIPE (exit 141 or a crash). The lost output is an output failure: exit 3,
# or the verdict's when that is 1, 4 or 5 (docs/reliability.md). Signals to this script reach mpirun.
sig=0 pid=
trap 'sig=130; [ -n "$pid" ] && kill -TERM $pid 2>/dev/null' INT
trap 'sig=143; [ -n "$pid" ] && kill -TERM $pid 2>/dev/null' TERM
. "$root/launch/relay.sh"
relay_start
"${cmd[@]}" >"$relay_dir/out" &
pid=$!
[ $sig -ne 0 ] && kill -TERM $pid 2>/dev/null
rc=0
while :; do
  wait $pid && rc=0 || rc=$?
  kill -0 $pid 2>/dev/null || break # wait returned because of a trapped signal: keep waiting for mpirun
done
relay_finish launch/run-hosts.sh
[ $sig -ne 0 ] && exit $sig
exit $rc
