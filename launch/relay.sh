# relay.sh: sourced by launch/run.sh and launch/run-hosts.sh: standard output, when it is not a terminal, goes
# through a relay that keeps draining after its reader closed it (`| head`), since mpirun would abort on SIGPIPE
# (exit 141 or a crash, the other outputs unwritten). The lost output is an output failure: exit 3, or the
# verdict's when that is 1, 2, 4 or 5, as ddpbench itself does (docs/reliability.md). Runs nothing by itself.

# relay_start: the relay's fifo in $relay_dir/out, its process in $relay_pid; removed at exit.
relay_start() {
  relay_dir=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-relay.XXXXXX")
  trap 'rm -rf "$relay_dir"' EXIT
  mkfifo "$relay_dir/out"
  (
    trap '' PIPE # cat gets EPIPE (an error) instead of dying of SIGPIPE
    cat 2>/dev/null || { : >"$relay_dir/broken"; cat >/dev/null; }
  ) <"$relay_dir/out" &
  relay_pid=$!
}

# relay_finish SCRIPT: waits for the relay to drain; when its reader closed early, says so and sets rc to 3
# unless rc is already a verdict (1, 2, 4, 5) or a signal ended the job (sig).
relay_finish() {
  while ! wait $relay_pid; do kill -0 $relay_pid 2>/dev/null || break; done
  if [ -e "$relay_dir/broken" ]; then
    echo "$1: standard output was closed by its reader before the job's output ended: that output is lost" >&2
    case $rc in 1 | 2 | 4 | 5) ;; *) [ $sig -ne 0 ] || rc=3 ;; esac
  fi
}
