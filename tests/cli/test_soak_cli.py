#!/usr/bin/env python3
"""test_soak_cli: `ddpbench accept --soak` from the command line, on the CPU device.

- bad input, each one line naming the key and exit 2, before MPI: --interval or --pair-every without --soak, a
  duration that is not one ("3x", hexadecimal "0x10"), an interval longer than the soak, a --timeout below 2 x
  --interval + 10 s, a --expect file with a bad soak ceiling, a --health-seconds longer than the interval;
- a rank whose weights go wrong mid-soak (DDPBENCH_TEST_CORRUPT_RANK=1:2, as a silent data corruption would):
  soak_weights fails rank 1 from interval 2 with its time, exit 4, --failed-hosts lists its host, the bottom line
  opens with the soak's length and intervals, every interval of the series is there (--csv has the per-interval
  rows, --prom the last interval and ddpbench_soak_interval);
- a rank stalled or stopped in interval 3 (DDPBENCH_TEST_FAULT=stall:1:soak, stop:1:soak): the watchdog ends the
  job, exit 3, and rank 0 writes the document of intervals 1 and 2 once more, INCOMPLETE, state interrupted (JSON
  and prom), the stopped rank its suspect; a rank killed there: a non-zero exit, the same document, state running;
- --expect's soak ceilings are accepted (soak_pcie_replay_per_min) and a healthy soak passes with exit 0.
About 110 s on the 2-core machine. argv: MPIEXEC DDPBENCH. Ends with "N passed, N failed"."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

mpiexec, prog = sys.argv[1], os.path.abspath(sys.argv[2])
env = dict(os.environ)
env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
           OPENBLAS_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
env.pop("DDPBENCH_TEST_CORRUPT_RANK", None)
tmp = tempfile.mkdtemp(prefix="ddpbench-soak-cli-")


def run(args, extra=None, np=None, timeout=120):
    e = dict(env, **(extra or {}))
    cmd = ([mpiexec, "-np", str(np), "-x", "DDPBENCH_TEST_CORRUPT_RANK"] if np else []) + [prog, "accept"] + args
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout, cwd=tmp)
    return p.returncode, p.stdout, p.stderr


bad = os.path.join(tmp, "bad.ini")
with open(bad, "w") as f:
    f.write("soak_pcie_replay_per_min = many\n")
for args, key in ((["--interval", "3s"], "--interval"), (["--pair-every", "2"], "--pair-every"),
                  (["--soak", "3x"], "--soak"), (["--soak", "10s", "--interval", "20s"], "--interval"),
                  (["--soak", "1m", "--interval", "20s", "--timeout", "30"], "--timeout"),
                  (["--soak", "10s", "--interval", "2s", "--expect", bad], "soak_pcie_replay_per_min"),
                  (["--soak", "0x10", "--interval", "0x8"], "--soak"), (["--soak", "16s", "--interval", "0x8"], "--interval"),
                  (["--soak", "6s", "--interval", "2s", "--health-seconds", "3"], "--health-seconds")):
    rc, out, err = run(args)
    lines = [x for x in err.splitlines() if x.startswith("ddpbench:") and "no GPU visible" not in x]
    check(rc == 2 and len(lines) == 1 and key in lines[0], "%s: exit 2, one line naming %s (%d: %s)" %
          (" ".join(args), key, rc, lines))

# a rank corrupted from interval 2
j, hosts, c, pr = (os.path.join(tmp, n) for n in ("c.json", "drain.txt", "c.csv", "c.prom"))
rc, out, err = run(["--soak", "10s", "--interval", "2s", "--json", j, "--failed-hosts", hosts, "--csv", c, "--prom", pr,
                    "--progress", "none"], {"DDPBENCH_TEST_CORRUPT_RANK": "1:2"}, np=3)
check(rc == 4, "a corrupted rank: exit 4 (%d)" % rc)
d = json.load(open(j))
s = d["soak"]
n = s["intervals_complete"]
# 3 ranks on the cpu device share 2 cores with the rest of CI: one rank's GEMM can be starved for the whole soak,
# which its own intervals cannot tell from a slow GPU (CI, 2026-12-07: gemm_fp32.rel failed rank 1 beside the
# weights). The relative GEMM verdicts are tested elsewhere; here the weights' finding must be the only other fail.
fails = [f for f in d["findings"] if f["severity"] == "fail" and not re.match(r"gemm_\w+\.rel$", f["check"])]
w = [f for f in fails if f["check"] == "soak_weights"]
check(len(fails) == 1 and len(w) == 1 and w[0]["rank"] == 1 and w[0]["interval"] == 2 and w[0]["scope"] == "rank",
      "soak_weights alone fails, rank 1 from interval 2 (%s)" % [(f["check"], f.get("rank"), f.get("interval")) for f in fails])
check(w and abs(w[0]["t_s"] - s["intervals"][1]["t0_s"]) < 1e-6, "its time is interval 2's start (%s)" % (w and w[0]["t_s"]))
check(w and "%d of %d intervals" % (n - 1, n) in w[0]["text"], "the text counts the intervals off (%s)" % (w and w[0]["text"]))
# n >= 2: the corruption starts in interval 2. How many intervals a 10 s soak of 2 s intervals completes depends on
# the machine: 2 under the sanitizers on 2 busy cores (CI, 2026-12-06), where each interval stretches past 2 s.
check(d["verdict"] == "FAIL" and s["state"] == "complete" and n >= 2, "FAIL, complete, %d intervals" % n)
host = w[0]["host"] if w else "?"
check(open(hosts).read().split() == [host], "--failed-hosts lists %s" % host)
bottom = [x for x in out.splitlines() if x.startswith("ddpbench accept:")]
check(bottom and " soak " in bottom[-1] and "(%d intervals)" % n in bottom[-1], "the bottom line: %s" % bottom)
rows = list(csv.DictReader(open(c)))
tf = [r for r in rows if r["metric"] == "gemm_tflops"]
check(len(tf) == 3 * n and {r["labels"].split(";")[0] for r in tf} == {"interval=%d" % i for i in range(1, n + 1)},
      "--csv: one gemm_tflops row per rank and interval (%d rows, %d intervals)" % (len(tf), n))
prom = open(pr).read()
check("ddpbench_soak_interval{" in prom and (" %d\n" % n) in prom.split("ddpbench_soak_interval{")[1][:200] and
      "ddpbench_soak_rank_gemm_flops_per_second" in prom and "interval=" not in prom,
      "--prom: the last interval, ddpbench_soak_interval %d, no interval labels" % n)

# a rank that stops answering (stalled in a loop, or SIGSTOPped), or dies, in interval 3: the document of intervals
# 1 and 2 stays, INCOMPLETE; with rank 0 alive at the watchdog's end, written once more as state interrupted, the
# stopped rank among its suspects (JSON and prom); a killed rank takes the job down at once: state running
for action, want in (("stall", 3), ("stop", 3), ("kill", None)):
    jf, pf = os.path.join(tmp, action + ".json"), os.path.join(tmp, action + ".prom")
    e = dict(env, DDPBENCH_TEST_FAULT="%s:1:soak" % action)
    p = subprocess.run([mpiexec, "-np", "3", "-x", "DDPBENCH_TEST_FAULT", prog, "accept", "--soak", "60s", "--interval", "2s",
                        "--timeout", "15", "--json", jf, "--prom", pf, "--progress", "none"], env=e, capture_output=True,
                       text=True, timeout=150, cwd=tmp)
    ok = p.returncode == want if want is not None else p.returncode != 0
    check(ok, "rank 1 %s in interval 3: exit %s (%d)" % (action, want if want is not None else "non-zero", p.returncode))
    try:
        dj = json.load(open(jf))
    except (OSError, ValueError) as x:
        dj = {"soak": {}, "error": str(x)}
    iv = [i["interval"] for i in dj["soak"].get("intervals", [])]
    state = "running" if action == "kill" else "interrupted"
    check(iv == [1, 2] and dj.get("verdict") == "INCOMPLETE" and dj["soak"].get("state") == state and
          dj.get("state") == state and isinstance(dj.get("findings"), list),
          "%s: the document holds intervals 1 and 2, INCOMPLETE, state %s (%s, %s, %s)" %
          (action, state, iv, dj.get("verdict"), dj.get("state")))
    prom = open(pf).read() if os.path.exists(pf) else ""
    check(('ddpbench_run_state{kind="accept",mode="soak",state="%s"} 1' % state) in prom and 'ddpbench_run_ok{kind="accept",mode="soak"} 0' in prom,
          "%s: prom: state %s, run_ok 0" % (action, state))
    if action == "stop":
        sus = dj.get("suspects", [])
        check([x.get("rank") for x in sus] == [1] and 'ddpbench_run_suspect{kind="accept",mode="soak",rank="1",' in prom,
              "stop: rank 1 the one suspect in the JSON and the prom (%s)" % sus)
    check(not [n for n in os.listdir(tmp) if ".tmp" in n], "%s: no temporary file left" % action)

# a healthy soak with --expect's soak ceilings
good = os.path.join(tmp, "good.ini")
with open(good, "w") as f:
    f.write("soak_pcie_replay_per_min = 2\nsoak_ecc_corrected_per_min = 0.5\n")
rc, out, err = run(["--soak", "6s", "--interval", "2s", "--expect", good, "--json", os.path.join(tmp, "g.json"),
                    "--progress", "none"], np=2)
g = json.load(open(os.path.join(tmp, "g.json")))
check(rc == 0 and g["verdict"] in ("PASS", "WARN") and not [f for f in g["findings"] if f["severity"] == "fail"],
      "a healthy soak with --expect ceilings passes (%d, %s)" % (rc, g["verdict"]))
sys.exit(pycheck.summary())
