#!/usr/bin/env python3
"""test_soak_outputs.py: what a soak's output files say while it runs, when a write fails, and when it ends early.

On the CPU device, short soaks of 2 s intervals (the counts of intervals are read from the files, never assumed:
on 2 busy cores one interval can take 8 s):
  - every interim document carries the first cycle's acceptance verdicts: with --expect gemm_fp32_tflops = 1000
    (no CPU reaches it) the JSON written while the soak runs has a failing gemm_fp32 finding, its hosts in
    failed_hosts and in --failed-hosts, the Prometheus file ddpbench_findings{severity="fail"} > 0, state
    "running" and ddpbench_run_ok 0 (the soak is then ended by SIGTERM);
  - the first interval's writes fail (DDPBENCH_TEST_WRITE_FAIL=1:1, ENOSPC): the soak goes on, exit 0, every
    file written at the end, the JSON with a warning soak_write naming --json, interval 1 and the error; state
    "complete", ddpbench_run_state{state="complete"} 1 and ddpbench_run_ok 1; ddpbench_soak_intervals_complete
    and the JSON's intervals_complete alike; the progress log's "done, N intervals" is the measured N;
  - every write from the second on fails (DDPBENCH_TEST_WRITE_FAIL=2): the final write fails, exit 3, stderr
    names --prom and its file, and the files keep interval 1's interim document (state running);
  - a finding added after the soak's own judgement, where NCCL's account is judged (DDPBENCH_TEST_NCCL_FINDING=1,
    since the CPU device has no NCCL): exit 4, and the final Prometheus file says ddpbench_run_ok 0 (it was written
    before that finding came in, and said 1);
  - the first interim write held 27 s under --timeout 25 (DDPBENCH_TEST_WRITE_DELAY=27:1; a --timeout that the
    sanitizers' slower start-up passes): a busy section, not a stall: the
    soak completes, exit 0.
The watchdog's end (a stalled rank: state interrupted, suspects) is test_soak_cli's. About 90 s on the 2-core
machine. argv: MPIEXEC DDPBENCH. Ends with "N passed, N failed"."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

mpiexec, prog = sys.argv[1], os.path.abspath(sys.argv[2])
env = dict(os.environ)
env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
           OPENBLAS_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
for k in ("DDPBENCH_TEST_WRITE_FAIL", "DDPBENCH_TEST_WRITE_DELAY", "DDPBENCH_TEST_FAULT", "DDPBENCH_TEST_NCCL_FINDING"):
    env.pop(k, None)
tmp = tempfile.mkdtemp(prefix="ddpbench-soak-outputs-")
HOOKS = ["-x", "DDPBENCH_TEST_WRITE_FAIL", "-x", "DDPBENCH_TEST_WRITE_DELAY", "-x", "DDPBENCH_TEST_RANKS_PER_NODE",
         "-x", "DDPBENCH_TEST_NCCL_FINDING"]


def files(name):
    return {k: os.path.join(tmp, "%s.%s" % (name, k)) for k in ("json", "prom", "csv", "drain")}


def outputs(f):
    return ["--json", f["json"], "--prom", f["prom"], "--csv", f["csv"], "--failed-hosts", f["drain"]]


def run(np, args, extra=None, timeout=200):
    e = dict(env, **(extra or {}))
    p = subprocess.run([mpiexec, "-np", str(np)] + HOOKS + [prog, "accept"] + args, env=e, capture_output=True,
                       text=True, timeout=timeout, cwd=tmp)
    return p.returncode, p.stdout, p.stderr


def prom_value(text, series):
    m = re.search("^" + re.escape(series) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


# 1. the interim documents carry the first cycle's verdicts
exp = os.path.join(tmp, "exp.ini")
with open(exp, "w") as fh:
    fh.write("gemm_fp32_tflops = 1000\n")
f = files("oneshot")
e = dict(env, DDPBENCH_TEST_RANKS_PER_NODE="1")
p = subprocess.Popen([mpiexec, "-np", "2"] + HOOKS + [prog, "accept", "--soak", "120s", "--interval", "2s",
                     "--expect", exp, "--progress", "none"] + outputs(f), env=e, cwd=tmp, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
doc, deadline = None, time.time() + 90
while time.time() < deadline and p.poll() is None:
    time.sleep(0.5)
    try:
        d = json.load(open(f["json"]))
        prom = open(f["prom"]).read()
        drain = open(f["drain"]).read().split()
    except (OSError, ValueError):
        continue
    if d.get("soak", {}).get("intervals_complete", 0) >= 1 and "ddpbench_soak_interval{" in prom:
        doc = d
        break
os.killpg(p.pid, signal.SIGTERM)
try:
    p.wait(timeout=30)
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
check(doc is not None, "an interim document was written while the soak ran")
doc = doc or {}
gemm = [x for x in doc.get("findings", []) if x["check"].startswith("gemm_fp32") and x["severity"] == "fail"]
check(doc.get("state") == "running" and doc.get("verdict") == "INCOMPLETE" and len(gemm) >= 2,
      "interim: state running, INCOMPLETE, gemm_fp32 fails on both ranks (%s, %s, %d)" %
      (doc.get("state"), doc.get("verdict"), len(gemm)))
check(len(doc.get("failed_hosts", [])) == 2 and sorted(drain) == sorted(doc.get("failed_hosts", [])),
      "interim: both hosts in failed_hosts and --failed-hosts (%s, %s)" % (doc.get("failed_hosts"), drain))
check((prom_value(prom, 'ddpbench_findings{kind="accept",mode="soak",severity="fail"}') or 0) >= 2 and
      prom_value(prom, 'ddpbench_run_ok{kind="accept",mode="soak"}') == 0 and
      prom_value(prom, 'ddpbench_run_state{kind="accept",mode="soak",state="running"}') == 1 and
      "ddpbench_run_end_time_seconds" not in prom and "ddpbench_run_updated_time_seconds{" in prom,
      "interim prom: fails counted, run_ok 0, state running, updated time, no end time")

# 2. the first interval's writes fail: the soak goes on, the end writes every file
f = files("retry")
rc, out, err = run(2, ["--soak", "4s", "--interval", "2s", "--progress", "log"] + outputs(f),
                   {"DDPBENCH_TEST_WRITE_FAIL": "1:1"})
check(rc == 0, "interval 1's writes fail (ENOSPC): the soak goes on, exit 0 (%d: %s)" % (rc, err[-400:]))
check("interval 1: --json %s could not be written (No space left on device)" % f["json"] in err,
      "stderr names the interval, the output and the error")
try:
    d = json.load(open(f["json"]))
    prom = open(f["prom"]).read()
except (OSError, ValueError) as x:
    d, prom = {"soak": {}}, ""
    check(False, "the end's files: %s" % x)
n = d["soak"].get("intervals_complete")
w = [x for x in d.get("findings", []) if x["check"] == "soak_write"]
check(len(w) == 4 and all(x["severity"] == "warn" and x.get("interval") == 1 and "No space left on device" in x["text"]
                          for x in w) and any("--json" in x["text"] for x in w),
      "a soak_write warning per output, interval 1, the error (%s)" % [x["text"][:80] for x in w])
check(d.get("state") == "complete" and d["soak"].get("state") == "complete" and d.get("exit_code") == 0,
      "state complete, exit_code 0 (%s, %s)" % (d.get("state"), d.get("exit_code")))
check(prom_value(prom, 'ddpbench_run_state{kind="accept",mode="soak",state="complete"}') == 1 and
      prom_value(prom, 'ddpbench_run_ok{kind="accept",mode="soak"}') == 1 and
      prom_value(prom, 'ddpbench_soak_intervals_complete{kind="accept",mode="soak",group="world"}') == n,
      "prom: state complete, run_ok 1, ddpbench_soak_intervals_complete %s" % n)
check(d.get("start_time", "") <= d.get("end_time", ""), "end_time is not before start_time")
done = re.findall(r"soak: done, (\d+) intervals", err)
check(done == [str(n)], "the progress log says the measured count: done, %s intervals (%s)" % (n, done))

# 3. the final write fails: exit 3 naming it, the last good file stays
f = files("final")
rc, out, err = run(2, ["--soak", "2s", "--interval", "2s", "--progress", "none"] + outputs(f),
                   {"DDPBENCH_TEST_WRITE_FAIL": "2"})
check(rc == 3, "every write from the second fails: exit 3 (%d)" % rc)
check("the final write of --prom %s failed (No space left on device)" % f["prom"] in err,
      "stderr names the output whose final write failed")
try:
    d = json.load(open(f["json"]))
    prom = open(f["prom"]).read()
except (OSError, ValueError) as x:
    d, prom = {"soak": {}}, ""
check(d["soak"].get("intervals_complete") == 1 and d.get("state") == "running" and
      prom_value(prom, 'ddpbench_soak_intervals_complete{kind="accept",mode="soak",group="world"}') == 1,
      "the files keep interval 1's interim document (%s, %s)" % (d["soak"].get("intervals_complete"), d.get("state")))

# 4. a finding from NCCL's account (judged after the soak's own verdicts): the final prom says the run failed
f = files("nccl")
rc, out, err = run(2, ["--soak", "2s", "--interval", "2s", "--progress", "none"] + outputs(f),
                   {"DDPBENCH_TEST_NCCL_FINDING": "1"})
try:
    d = json.load(open(f["json"]))
    prom = open(f["prom"]).read()
except (OSError, ValueError):
    d, prom = {}, ""
check(rc == 4 and d.get("exit_code") == 4 and any(x["check"] == "nccl_test" for x in d.get("findings", [])),
      "a failing NCCL-account finding: exit 4, in the JSON (%d, %s)" % (rc, d.get("exit_code")))
check(prom_value(prom, 'ddpbench_run_ok{kind="accept",mode="soak"}') == 0 and
      prom_value(prom, 'ddpbench_run_state{kind="accept",mode="soak",state="complete"}') == 1,
      "the final prom: state complete, run_ok 0 (%s)" % prom_value(prom, 'ddpbench_run_ok{kind="accept",mode="soak"}'))

# 5. an interim write slower than --timeout is a busy section, not a stall
f = files("slow")
rc, out, err = run(2, ["--soak", "1s", "--interval", "1s", "--timeout", "25", "--json", f["json"], "--progress",
                       "none"], {"DDPBENCH_TEST_WRITE_DELAY": "27:1"})
check(rc == 0 and "SUSPECT" not in err, "interim write held 27 s under --timeout 25: the soak completes (%d%s)" %
      (rc, ", a suspect named" if "SUSPECT" in err else ""))
try:
    d = json.load(open(f["json"]))
except (OSError, ValueError):
    d = {}
check(d.get("state") == "complete", "its JSON is the end's (%s)" % d.get("state"))
sys.exit(pycheck.summary())
