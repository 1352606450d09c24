#!/usr/bin/env python3
"""test_run_hosts: launch/run-hosts.sh, the multi-node wrapper, on this host alone (a hostfile of localhost).

  - --help and -h print the wrapper's text (its options, --ppn among them) on stdout and exit 0; before, --help
    was taken for the hostfile ("hostfile --help: cannot read it", exit 2);
  - the mpirun line it prints passes -q (DDPBENCH_DRY_RUN=1);
  - a bad ddpbench option through it on 2 ranks: exit 2 and stderr is the printed mpirun line and ddpbench's one
    line, without Open MPI's "Primary job terminated normally" notice.
argv: ddpbench source_dir. Ends with "N passed, N failed".
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

prog, src = sys.argv[1], sys.argv[2]
wrapper = os.path.join(src, "launch", "run-hosts.sh")


def run(args, **env):
    e = dict(os.environ, DDPBENCH_BIN=prog, **env)
    p = subprocess.run([wrapper] + args, capture_output=True, text=True, timeout=120, env=e)
    return p.returncode, p.stdout, p.stderr


for flag in ("--help", "-h"):
    rc, out, err = run([flag])
    check(rc == 0 and "usage" not in err and "--ppn N" in out and "-q " in out and not err,
          "%s: the wrapper's text on stdout, exit 0: rc %d, out %r, err %r" % (flag, rc, out[:200], err[:300]))

with tempfile.TemporaryDirectory() as tmp:
    hostfile = os.path.join(tmp, "hostfile")
    with open(hostfile, "w") as f:
        f.write("localhost slots=2\n")
    rc, out, err = run([hostfile, "--ppn", "2", "--steps", "1"], DDPBENCH_DRY_RUN="1")
    line = [x for x in err.splitlines() if x.startswith("# ")]
    check(rc == 0 and line and line[0].split()[1:3] == ["mpirun", "-q"],
          "the mpirun line passes -q: rc %d, %r" % (rc, err))

    rc, out, err = run([hostfile, "--ppn", "2", "--hidden", "0"],
                       DDPBENCH_MPIRUN_ARGS="--oversubscribe")
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("# mpirun")]
    check(rc == 2 and "hidden" in err and "Primary job" not in err and len(lines) <= 2,
          "a bad option through run-hosts.sh: exit 2, ddpbench's line without Open MPI's notice: rc %d, %r" % (rc, err))

sys.exit(pycheck.summary())
