#!/usr/bin/env python3
"""test_memory_fit: a job that does not fit in memory is bad input, exit 2 with one line, before it is killed
(137 from the OOM killer in a 1 GiB memory cgroup, as Slurm gives jobs):

  - a model of 256 GiB a rank (--hidden 65536 --layers 16) on 2 ranks: exit 2, the line names MemAvailable and
    the share of each of the 2 ranks, no "cannot allocate";
  - inside a memory cgroup of 512 MiB made for the test (v1 or v2; removed after): --hidden 4096 --layers 8 (four
    512 MiB buffers a rank) exits 2 naming the cgroup's limit, within 60 s, not 137; configs/ci.ini still runs
    there (exit 0).
argv: ddpbench mpiexec source_dir. The cgroup part is skipped (said) where no memory cgroup can be made; the
test exits 77 only when neither part can run. Ends with "N passed, N failed".
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def make_cgroup(limit):
    """A fresh memory cgroup with that limit: (dir, procs file), or None."""
    for root, knob in (("/sys/fs/cgroup", "memory.max"), ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")):
        if not os.path.exists(os.path.join(root, knob if root.endswith("memory") else "cgroup.controllers")):
            continue
        d = tempfile.mkdtemp(prefix="ddpbench-memfit-", dir=root) if os.access(root, os.W_OK) else None
        if not d:
            continue
        try:
            open(os.path.join(d, knob), "w").write(str(limit))
            return d
        except OSError:
            os.rmdir(d)
    return None


def main():
    prog, mpiexec, src = sys.argv[1], sys.argv[2], sys.argv[3]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    job = [mpiexec, "-np", "2", "--oversubscribe", prog, "--device", "cpu", "--progress", "none"]
    r = subprocess.run(job + ["--hidden", "65536", "--layers", "16"], env=env, capture_output=True, timeout=120)
    err = r.stderr.decode(errors="replace")
    lines = [l for l in err.splitlines() if l.startswith("ddpbench: ")]
    check(r.returncode == 2 and len(lines) == 1 and "MemAvailable" in lines[0] and "over 2 ranks" in lines[0]
          and "cannot allocate" not in err, "256 GiB a rank: exit %d, %s" % (r.returncode, err[-600:]))
    cg = make_cgroup(512 << 20)
    if not cg:
        print("no memory cgroup can be made here: the cgroup part is skipped")
        return pycheck.summary()
    try:
        procs = os.path.join(cg, "cgroup.procs")
        for args, want in ((["--hidden", "4096", "--layers", "8"], 2), (["--config", os.path.join(src, "configs/ci.ini")], 0)):
            sh = 'echo $$ > "%s" && exec "$@"' % procs
            r = subprocess.run(["sh", "-c", sh, "sh"] + job + args, env=env, capture_output=True, timeout=60)
            err = r.stderr.decode(errors="replace")
            if want == 2:
                lines = [l for l in err.splitlines() if l.startswith("ddpbench: ")]
                check(r.returncode == 2 and len(lines) == 1 and "memory cgroup" in lines[0],
                      "4096 x 8 in 512 MiB: exit %d (not 137), one line naming the cgroup: %s" % (r.returncode, err[-800:]))
            else:
                check(r.returncode == 0, "ci.ini in 512 MiB: exit %d %s" % (r.returncode, err[-500:]))
    finally:
        for _ in range(50):  # the cgroup goes once its processes have
            try:
                os.rmdir(cg)
                break
            except OSError:
                import time
                time.sleep(0.1)
        check(not os.path.exists(cg), "the test's cgroup is removed")
    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main())
