#!/bin/sh
# throttle.sh HOST DIR CMD...: run by mpirun as each rank's program. On host HOST (its hostname) the rank writes
# its pid to DIR/throttle.pid and waits (30 s at most) for DIR/throttle.go: the test, outside the namespaces
# (ip netns exec hides the machine's cgroup file system), moves that pid into a cpu cgroup with a quota
# (mn_cgroup_cpu) meanwhile, so that the rank is really slower. Elsewhere it only execs CMD. Used by
# test_straggler_hosts.sh. It must never throttle a rank of another host, nor wait without a bound.
if [ "$(hostname)" = "$1" ]; then
  echo $$ >"$2/throttle.pid.tmp" && mv "$2/throttle.pid.tmp" "$2/throttle.pid"
  n=0
  while [ ! -e "$2/throttle.go" ]; do
    n=$((n + 1))
    [ $n -gt 300 ] && { echo "throttle.sh: $2/throttle.go never came" >&2; exit 3; }
    sleep 0.1
  done
fi
shift 2
exec "$@"
