#!/usr/bin/env python3
"""test_schema_live: documents the built binary writes now, of every kind, satisfy docs/result.schema.json.

On 2 ranks of the CPU device, tiny sizes (seconds each on a 2-core machine), into a temporary folder:
  - run: configs/ci.ini, 4 steps, fp16 (loss scale, skipped steps), the scaling sweep over world and node groups;
    the same under --strategy fsdp (its phase, collectives and fsdp section);
  - accept: 0.5 s of GEMM against an --expect floor it passes (findings with "passed": true);
  - collectives: allreduce, broadcast, reduce, gather, scatter, sendrecv and alltoallv, 1K to 4K bytes (reductions,
    rooted collectives, both placements, out-of-place-only ones);
  - accept --soak: 12 s of 3 s intervals (the soak section), the final document and an interim one (state running,
    verdict INCOMPLETE) copied while it runs;
  - doctor (the topology section);
  - export of the run and of the accept document (source_kind run and accept);
  - compare of 4 runs against 4 (tested rows) and of 1 against 1 (untested rows: verdict ?, null p and CI).
Then tests/unit/test_schema.py validates them beside the version 1 and version 2 fixtures (every file valid, every kind
present, the negative cases rejected). argv: MPIEXEC DDPBENCH SOURCE_DIR. Exit 77 when python3-jsonschema is missing.
Ends with "N passed, N failed"."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema  # noqa: F401  (test_schema.py needs it; skip before running anything)
except ImportError:
    print("jsonschema is not installed (apt-get install python3-jsonschema)", file=sys.stderr)
    print("0 passed, 0 failed")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def run(cmd, out=None, ok=(0,), timeout=90, stdout_to=None):
    """Runs cmd; checks its exit code is in ok and that it wrote out (a non-empty file)."""
    try:
        if stdout_to:
            with open(stdout_to, "w") as f:
                p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, timeout=timeout, env=ENV)
        else:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)
    except subprocess.TimeoutExpired:
        check(False, f"{' '.join(cmd)}: no end within {timeout} s")
        return False
    good = p.returncode in ok
    check(good, f"{' '.join(cmd)}: exit {p.returncode} (want {ok}): {p.stderr[-1500:]}")
    if out:
        wrote = os.path.isfile(out) and os.path.getsize(out) > 0
        check(wrote, f"{' '.join(cmd)}: wrote {out}")
        good = good and wrote
    return good


def soak_docs(cmd, out, interim, timeout=90):
    """Runs a soak; copies its --json while the soak section says running (after its first interval, before the
    end). Returns the files written: the final document, then the interim copy when one was seen."""
    import json
    import time
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    seen, t_end = False, time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < t_end:
        time.sleep(0.2)
        if seen:
            continue
        try:  # the document is replaced atomically: a read sees a whole one
            with open(out) as f:
                text = f.read()
            seen = json.loads(text).get("soak", {}).get("state") == "running"
        except (OSError, ValueError):
            continue
        if seen:
            with open(interim, "w") as f:
                f.write(text)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        check(False, f"{' '.join(cmd)}: no end within {timeout} s")
        return []
    err = proc.stderr.read()
    check(proc.returncode in VERDICTS, f"{' '.join(cmd)}: exit {proc.returncode} (want {VERDICTS}): {err[-1500:]}")
    check(seen, f"{' '.join(cmd)}: an interim document (soak state running) was seen while it ran")
    got = [x for x in (out, interim) if os.path.isfile(x) and os.path.getsize(x) > 0]
    check(out in got, f"{' '.join(cmd)}: wrote {out}")
    if out in got:
        d = json.load(open(out))
        s = d.get("soak", {})
        n = s.get("intervals_complete", -1)
        check(s.get("state") == "complete" and n >= 2, f"soak: complete with 2 or more intervals: {s.get('state')}, {n}")
        lens = {len(g[k]) for g in s.get("gpus", []) for k in ("tflops", "temperature_c", "compute_ms")}
        lens |= {len(x["busbw_gbs"]) for x in s.get("links", [])} | {len(s.get("intervals", []))}
        check(lens == {n}, f"soak: every series has one entry per complete interval ({n}): {sorted(lens)}")
    return got


if len(sys.argv) < 4:
    print("usage: test_schema_live.py MPIEXEC DDPBENCH SOURCE_DIR", file=sys.stderr)
    sys.exit(2)
mpiexec, prog, src = sys.argv[1:4]
ENV = dict(os.environ)
for k, val in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
               ("OMPI_MCA_rmaps_base_oversubscribe", "1")):
    ENV.setdefault(k, val)
mpi = [mpiexec, "-np", "2", "--oversubscribe", prog]
# The verdict exit codes (1 something differs, 4 a check failed, 5 non-finite) still write the document: a slow or
# noisy build machine may fail a check, which is not this test's business. 2 (usage) and 3 (runtime) are failures.
VERDICTS = (0, 1, 4, 5)

tmp = tempfile.mkdtemp(prefix="ddpbench-test-schema-")
try:
    p = lambda name: os.path.join(tmp, name)  # noqa: E731
    docs = []
    if run(mpi + ["--config", os.path.join(src, "configs/ci.ini"), "--steps", "4", "--warmup", "1", "--precision",
                  "fp16", "--sweep", "--groups", "world,node", "--device", "cpu", "--progress", "none", "--json", p("run.json")],
           p("run.json"), VERDICTS):
        docs.append(p("run.json"))
    # strategy fsdp, fp16 (the found_inf all-reduce), the sweep and the groups over the fsdp phase
    if run(mpi + ["--hidden", "62", "--layers", "3", "--batch", "16", "--lr", "0.05", "--steps", "4", "--warmup", "1",
                  "--precision", "fp16", "--strategy", "fsdp", "--sweep", "--groups", "world", "--device", "cpu", "--progress", "none",
                  "--json", p("run-fsdp.json")], p("run-fsdp.json"), VERDICTS):
        docs.append(p("run-fsdp.json"))
    with open(p("expect.ini"), "w") as f:
        f.write("gemm_fp32_tflops = 0.000001\n")
    if run(mpi + ["accept", "--health-seconds", "0.5", "--device", "cpu", "--expect", p("expect.ini"), "--json",
                  p("accept.json")], p("accept.json"), VERDICTS):
        docs.append(p("accept.json"))
    soaks = soak_docs(mpi + ["accept", "--soak", "12s", "--interval", "3s", "--device", "cpu", "--progress", "none",
                             "--quiet", "--json", p("soak.json")], p("soak.json"), p("soak-running.json"))
    if run(mpi + ["collectives", "allreduce,broadcast,reduce,gather,scatter,sendrecv,alltoallv", "-b", "1K", "-e", "4K", "-f", "4", "-n", "5", "--device", "cpu",
                  "--json", p("collectives.json")], p("collectives.json"), VERDICTS):
        docs.append(p("collectives.json"))
    if run(mpi + ["doctor", "--json", p("doctor.json")], p("doctor.json"), (0, 1, 2)):
        docs.append(p("doctor.json"))
    for what in ("run", "accept"):
        if p(f"{what}.json") in docs and run([prog, "export", p(f"{what}.json"), "--json", p(f"export-{what}.json")],
                                             p(f"export-{what}.json")):
            docs.append(p(f"export-{what}.json"))
    if p("collectives.json") in docs:
        # NCCL's account (a GPU run's "nccl" section, hand-made here: the CPU device has none) survives export
        import json
        d = json.load(open(p("collectives.json")))
        d["nccl"] = {"reported": True, "why": None, "source": "ddpbench", "ranks": [{"rank": 0, "host": "h", "account": {
            "version": "2.28.3+cuda13.0", "net": "Socket", "communicators": [{"label": "world", "nranks": 2, "peers": []}]}}]}
        with open(p("collectives-nccl.json"), "w") as f:
            json.dump(d, f)
        if run([prog, "export", p("collectives-nccl.json"), "--json", p("export-nccl.json")], p("export-nccl.json")):
            docs.append(p("export-nccl.json"))
            e = json.load(open(p("export-nccl.json")))
            check(e.get("nccl") == d["nccl"], f"export keeps the nccl section: {str(e.get('nccl'))[:200]}")
    if p("run.json") in docs:
        # compare refuses the same run twice: eight copies of the run, each with a start time of its own
        import json
        runs = []
        for i in range(8):
            d = json.load(open(p("run.json")))
            d["start_time"] = "2026-12-02T00:00:%02dZ" % i
            with open(p("run-%d.json" % i), "w") as f:
                json.dump(d, f)
            runs.append(p("run-%d.json" % i))
        for name, a, b in (("compare.json", runs[:4], runs[4:]), ("compare-few.json", runs[:1], runs[1:2])):
            if run([prog, "compare"] + a + ["--"] + b + ["--format", "json"], p(name), (0, 5), stdout_to=p(name)):
                docs.append(p(name))

    docs += soaks  # after the plain accept document: test_schema.py's first accept document stays the one-shot one
    fx = os.path.join(src, "tests/data/fixtures")
    cmd = [sys.executable, os.path.join(src, "tests/unit/test_schema.py"), os.path.join(src, "docs/result.schema.json"),
           os.path.join(fx, "result-v1.json"), os.path.join(fx, "result-v2.json")] + docs
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    sys.stderr.write(r.stderr)
    m = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    check(m is not None, f"test_schema.py printed its counts: {r.stdout[-500:]}")
    if m:
        pycheck.add(int(m.group(1)), int(m.group(2)))
    check(r.returncode == 0, f"test_schema.py on the fresh documents: exit {r.returncode}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

sys.exit(pycheck.summary())
