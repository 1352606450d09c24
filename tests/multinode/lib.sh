# shellcheck shell=bash
# tests/multinode/lib.sh: N emulated hosts (2 to 4) on one machine, for the multinode tests (sourced).
#
# Provides: mn_init (checks, exits 77 naming what the kernel or machine refuses), mn_hosts_up N, mn_shape HOST
# RATE, mn_shape_pair HOST HOST RATE [FABRIC], mn_cgroup_cpu PCT, mn_mpirun ARGS (Open MPI across the hosts), mn_check / mn_done (the "N passed, N failed" counting),
# and a trap that removes everything it made on every exit path (normal end, failure, signal, CTest timeout).
#
# Layout. Each host is a network namespace ddpb<id>n<i> whose processes run in their own UTS namespace with
# hostname ddpb<id>n<i> (the rsh agent, agent.sh, sets it). A switch namespace ddpb<id>sw holds the bridge; each
# host and the launcher (namespace ddpb<id>n0, where mpirun runs) hang on it by a veth pair. Nothing is added
# to the machine's own namespace: no address, no route, no link, so no traffic can leave through eth0.
# The subnet is 10.<r>.<r>.0/24 inside those namespaces only, r random; a host i has 10.x.y.i, the launcher .100.
# It must never: touch a namespace or link it did not create, leave one behind, or run without a time bound.

MN_ID=${MN_ID:-$(printf '%04x%02x' $((RANDOM)) $(($$ % 256)))}
MN_PREFIX=ddpb$MN_ID
MN_DIR=""
MN_NS=()      # namespaces created, removed by the trap
MN_HOSTS=()   # host namespaces (= host names) in order
MN_CG=()      # cpu cgroups created (mn_cgroup_cpu), removed by the trap
MN_PASS=0
MN_FAIL=0
MN_SUBNET=""
MN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MN_SRC=${DDPBENCH_SOURCE_DIR:-$(cd "$MN_HERE/../.." && pwd)}
MN_BIN=${DDPBENCH_BIN:-$MN_SRC/build/dev/ddpbench}

# mn_bound SECONDS "$@": re-runs the calling script under timeout(1), which on expiry sends TERM to the
# script's whole process group; the script's trap then removes what it made. Keep SECONDS below the CTest
# TIMEOUT (CTest kills with SIGKILL, which no trap sees).
mn_bound() {
  [ -n "${MN_BOUND:-}" ] && return 0
  export MN_BOUND=$1
  exec timeout -k 15 "$1" "$0" "${@:2}"
}

mn_skip() { echo "SKIP: $*"; echo "0 passed, 0 failed"; exit 77; }

mn_cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  [ "$rc" = 124 ] && { echo "FAIL timed out after ${SECONDS}s (bound ${MN_BOUND:-none}): cleaning up"; echo "$MN_PASS passed, $((MN_FAIL + 1)) failed"; }
  # Processes still inside a namespace (an orted or rank an aborted mpirun left) end with it.
  for ns in "${MN_NS[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  for ns in "${MN_NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  for cg in "${MN_CG[@]}"; do
    for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    rmdir "$cg" 2>/dev/null || { sleep 0.5; rmdir "$cg" 2>/dev/null; }
  done
  [ -n "$MN_DIR" ] && rm -rf "$MN_DIR"
  exit "$rc"
}

# mn_init: checks what the harness needs; skips (77) with the reason when the machine cannot do it.
mn_init() {
  [ "$(id -u)" -eq 0 ] || mn_skip "network namespaces need root (running as $(id -un))"
  for t in ip unshare tc timeout mpirun jq; do
    command -v "$t" >/dev/null || mn_skip "$t not installed (tests/multinode/install.sh installs it)"
  done
  [ -x "$MN_BIN" ] || mn_skip "no ddpbench binary at $MN_BIN"
  trap mn_cleanup EXIT
  trap 'exit 124' INT TERM HUP
  MN_DIR=$(mktemp -d /tmp/ddpb-mn.XXXXXX)
  export MN_DIR
  local probe=${MN_PREFIX}p
  if ! err=$(ip netns add "$probe" 2>&1); then mn_skip "the kernel refuses network namespaces: $err"; fi
  MN_NS+=("$probe")
  if ! err=$(ip netns exec "$probe" unshare --uts true 2>&1); then mn_skip "the kernel refuses UTS namespaces: $err"; fi
  if ! err=$(ip -n "$probe" link add "${MN_PREFIX}pb" type bridge 2>&1); then mn_skip "the kernel refuses bridges: $err"; fi
  if ! err=$(ip -n "$probe" link add "${MN_PREFIX}pa" type veth peer name "${MN_PREFIX}pv" 2>&1); then
    mn_skip "the kernel refuses veth pairs: $err"
  fi
  if ! err=$(ip netns exec "$probe" tc qdisc add dev "${MN_PREFIX}pa" root tbf rate 100mbit burst 32kbit latency 400ms 2>&1); then
    mn_skip "the kernel refuses tc tbf: $err"
  fi
  ip netns del "$probe"
  MN_NS=()
  MN_SUBNET=10.$((100 + RANDOM % 100)).$((RANDOM % 250))
}

mn_ns_add() { ip netns add "$1" && MN_NS+=("$1") && ip -n "$1" link set lo up; }

# mn_link NS I: a veth from namespace NS (address .I) to the switch's bridge. The host's end has the same name,
# $MN_PREFIX, in every host (as eth0 would on a cluster), so that one interface name pins MPI and NCCL.
mn_link() {
  local ns=$1 i=$2
  local a=$MN_PREFIX b=${MN_PREFIX}b$i
  ip link add "$a" netns "$ns" type veth peer name "$b" netns "${MN_PREFIX}sw"
  ip -n "${MN_PREFIX}sw" link set "$b" master "${MN_PREFIX}br" up
  ip -n "$ns" addr add "$MN_SUBNET.$i/24" dev "$a"
  ip -n "$ns" link set "$a" up
}

# mn_hosts_up N: the switch, the launcher and N hosts; writes $MN_DIR/hostfile with SLOTS slots per host.
mn_hosts_up() {
  local n=$1 slots=${2:-2}
  mn_ns_add "${MN_PREFIX}sw"
  ip -n "${MN_PREFIX}sw" link add "${MN_PREFIX}br" type bridge
  ip -n "${MN_PREFIX}sw" link set "${MN_PREFIX}br" up
  mn_ns_add "${MN_PREFIX}n0"
  mn_link "${MN_PREFIX}n0" 100
  MN_HOSTS=()
  : >"$MN_DIR/hostfile"
  for i in $(seq 1 "$n"); do
    local h=${MN_PREFIX}n$i
    mn_ns_add "$h"
    mn_link "$h" "$i"
    MN_HOSTS+=("$h")
    echo "$h slots=$slots" >>"$MN_DIR/hostfile"
    echo "$MN_SUBNET.$i $h" >>"$MN_DIR/hosts"
  done
  # Every host answers on its address from the launcher (a TCP connect: there is no ping here).
  for i in $(seq 1 "$n"); do
    timeout 10 ip netns exec "${MN_PREFIX}n0" bash -c "
      for k in \$(seq 50); do
        (exec 3<>/dev/tcp/$MN_SUBNET.$i/9) 2>&1 | grep -q refused && exit 0; sleep 0.1; done; exit 1" ||
      { echo "host $i ($MN_SUBNET.$i) does not answer from the launcher" >&2; return 1; }
  done
}

# mn_shape HOST RATE: tbf on both ends of HOST's link (what it sends and what it receives).
mn_shape() {
  local h=$1 rate=$2
  local i=${h##*n}
  ip netns exec "$h" tc qdisc add dev "$MN_PREFIX" root tbf rate "$rate" burst 32kbit latency 400ms
  ip netns exec "${MN_PREFIX}sw" tc qdisc add dev "${MN_PREFIX}b$i" root tbf rate "$rate" burst 32kbit latency 400ms
}

# mn_shape_pair HOST_A HOST_B RATE [FABRIC]: only the traffic between HOST_A and HOST_B is shaped (the path between
# two nodes, not either node's link): on each of the two hosts an htb root whose default class is unlimited (or
# FABRIC, every host's egress then held to it: links, not the machine's cores, bound the pairs, as on a fabric) and
# a RATE class that a u32 filter fills with the packets addressed to the other host. Returns 1, naming what the
# kernel refused, when htb or u32 is missing.
mn_shape_pair() {
  local a=$1 b=$2 rate=$3 fabric=${4:-40gbit} h o err hosts=("$1" "$2")
  [ -n "${4:-}" ] && hosts=("${MN_HOSTS[@]}")
  for h in "${hosts[@]}"; do
    err=$(ip netns exec "$h" tc qdisc add dev "$MN_PREFIX" root handle 1: htb default 10 2>&1 &&
      ip netns exec "$h" tc class add dev "$MN_PREFIX" parent 1: classid 1:10 htb rate "$fabric" 2>&1) ||
      { echo "mn_shape_pair: the kernel refuses htb/u32 shaping: $err" >&2; return 1; }
  done
  for h in "$a:$b" "$b:$a"; do
    o=${h#*:} h=${h%%:*}
    err=$(ip netns exec "$h" tc class add dev "$MN_PREFIX" parent 1: classid 1:20 htb rate "$rate" ceil "$rate" 2>&1 &&
      ip netns exec "$h" tc filter add dev "$MN_PREFIX" parent 1: protocol ip prio 1 u32 \
        match ip dst "$MN_SUBNET.${o##*n}/32" flowid 1:20 2>&1) ||
      { echo "mn_shape_pair: the kernel refuses htb/u32 shaping: $err" >&2; return 1; }
  done
}

# mn_cgroup_cpu PCT: a cpu cgroup ($MN_PREFIX, the harness's name) whose processes get at most PCT % of one CPU
# (CFS quota over a 20 ms period, PCT >= 5: the kernel's least quota is 1 ms; v1 cpu.cfs_quota_us or v2 cpu.max).
# Sets MN_CG_PROCS to its cgroup.procs file, which a process joins by writing its pid there (call it directly, not
# in $(...): the trap must learn of the cgroup, and removes it). Returns 1, naming what was refused on stderr.
mn_cgroup_cpu() {
  local pct=$1 cg
  if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    cg=/sys/fs/cgroup/cpu/${MN_PREFIX}slow
    mkdir "$cg" 2>/dev/null || { echo "cannot create the cpu cgroup $cg" >&2; return 1; }
    MN_CG+=("$cg")
    echo 20000 >"$cg/cpu.cfs_period_us" && echo $((pct * 200)) >"$cg/cpu.cfs_quota_us" ||
      { echo "the kernel refuses a CFS quota in $cg" >&2; return 1; }
  elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cg=/sys/fs/cgroup/${MN_PREFIX}slow
    mkdir "$cg" 2>/dev/null || { echo "cannot create the cgroup $cg" >&2; return 1; }
    MN_CG+=("$cg")
    grep -qw cpu "/sys/fs/cgroup/cgroup.subtree_control" || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    echo "$((pct * 200)) 20000" >"$cg/cpu.max" 2>/dev/null || { echo "the kernel refuses cpu.max in $cg" >&2; return 1; }
  else
    echo "no cpu cgroup controller (neither v1 /sys/fs/cgroup/cpu nor v2 with cpu)" >&2
    return 1
  fi
  MN_CG_PROCS=$cg/cgroup.procs
}

# mn_env_set HOST VAR=VALUE: an environment variable that only HOST's processes see (set by the agent, as a
# site's login environment on one misconfigured node would).
mn_env_set() { echo "export $2" >>"$MN_DIR/env.$1"; }

# mn_mpirun SECONDS ARGS...: mpirun in the launcher namespace over the hosts, bounded by SECONDS.
# The switches are the ones a user needs on a real cluster too: the rsh agent, OOB and BTL held to the
# test subnet, the root switches.
mn_mpirun() {
  local t=$1
  shift
  timeout -k 5 "$t" ip netns exec "${MN_PREFIX}n0" \
    mpirun --allow-run-as-root --bind-to none --hostfile "$MN_DIR/hostfile" \
    --mca plm_rsh_agent "$MN_HERE/agent.sh" \
    --mca oob_tcp_if_include "$MN_SUBNET.0/24" --mca btl tcp,self --mca btl_tcp_if_include "$MN_SUBNET.0/24" \
    "$@"
}

# mn_check NAME CONDITION-EXIT-CODE: counts and prints one assertion.
mn_check() {
  local name=$1
  shift
  if "$@" >/dev/null; then MN_PASS=$((MN_PASS + 1)); echo "ok   $name"; else MN_FAIL=$((MN_FAIL + 1)); echo "FAIL $name"; fi
}

# mn_eq NAME GOT WANT
mn_eq() {
  if [ "$2" = "$3" ]; then MN_PASS=$((MN_PASS + 1)); echo "ok   $1 (${2//$'\n'/; })"
  else MN_FAIL=$((MN_FAIL + 1)); echo "FAIL $1: got '$2', want '$3'"; fi
}

mn_done() {
  echo "$MN_PASS passed, $MN_FAIL failed"
  [ "$MN_FAIL" -eq 0 ]
}

