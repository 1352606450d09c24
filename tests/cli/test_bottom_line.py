#!/usr/bin/env python3
"""test_bottom_line: every subcommand's last line, its JSON outcome, --quiet, --label and the outputs to "-"
(docs/outputs.md), on the CPU device under mpirun.

  - run, pass / warn / fail: the last line of standard output is "ddpbench run: VERDICT  ddp X ms/step  ...
    (N ranks, 1 host; F fail, W warn)" with the verdict of the exit code (0 PASS, 0 with warnings WARN, 1 FAIL);
    the JSON holds the same line, verdict and exit code, end_time >= start_time, duration_s > 0, a run_id;
  - --quiet: standard output is the failing and warning findings and the bottom line, nothing else;
  - accept, pass, warn (a huge warn band) and fail on 2 emulated hosts: "2 of 2 hosts fail (node00, node01:
    ...)", exit 4, and the JSON's failed_hosts; collectives (pass, and FAIL with a corrupted element), doctor, topo and export end with their own
    bottom lines;
  - --json -, --csv -, --prom -: the document on standard output (jq, pandas, promtool read it from a pipe),
    the report on standard error ending with the bottom line, and no file named "-"; two outputs to "-" and
    /dev/stdout are refused with exit 2 and one line (the latter with the hint to give -);
  - --label side=A --label nccl=2.21.5: in the JSON's labels, every CSV row's run_labels and run_id, and the
    Prometheus series; a bad label is exit 2 and one line naming --label.
  - launch/run.sh passes mpirun -q: a bad option is one line on stderr, not followed by Open MPI's notice.
argv: ddpbench mpiexec [source_dir]. Ends with "N passed, N failed".
"""
import calendar
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

prog, mpiexec = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="bottom-line-")
SMALL = ["--hidden", "64", "--layers", "2", "--batch", "16", "--steps", "4", "--warmup", "1"]
LINE = re.compile(r"^ddpbench (\w+): (PASS|WARN|FAIL|ERROR)(  .*)?  \((.*)\)$")


def job(np, args, env=None, stdin=None):
    e = dict(os.environ, **(env or {}))
    cmd = [mpiexec, "-q", "-np", str(np), "--oversubscribe", "--bind-to", "none", prog] + args
    p = subprocess.run(cmd, cwd=tmp, env=e, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def plain(args):
    p = subprocess.run([prog] + args, cwd=tmp, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def last(text):
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1] if lines else ""


def outcome(doc, line, verdict, code, what):
    check(doc.get("schema_version") == 4, "%s: schema_version 4, got %r" % (what, doc.get("schema_version")))
    check(doc.get("verdict") == verdict, "%s: JSON verdict %r, expected %s" % (what, doc.get("verdict"), verdict))
    check(doc.get("exit_code") == code, "%s: JSON exit_code %r, expected %d" % (what, doc.get("exit_code"), code))
    check(doc.get("bottom_line") == line, "%s: JSON bottom_line %r is not the text's %r" % (what, doc.get("bottom_line"), line))
    check(doc.get("end_time", "") >= doc.get("start_time", "~"), "%s: end_time %r before start_time %r"
          % (what, doc.get("end_time"), doc.get("start_time")))
    check(isinstance(doc.get("duration_s"), (int, float)) and doc["duration_s"] > 0, "%s: duration_s %r" % (what, doc.get("duration_s")))
    check(re.fullmatch(r"[0-9a-f]{16}", doc.get("run_id", "")) is not None, "%s: run_id %r" % (what, doc.get("run_id")))


def run_case(args, verdict, code, ranks, fail, warn, what, env=None):
    path = os.path.join(tmp, what + ".json")
    rc, out, err = job(ranks, SMALL + args + ["--json", path], env)
    line = last(out)
    m = LINE.match(line)
    check(rc == code, "%s: exit %d, expected %d\n%s" % (what, rc, code, err[-2000:]))
    check(m and m.group(1) == "run" and m.group(2) == verdict, "%s: last line %r" % (what, line))
    want = "%d rank%s, 1 host; %d fail, %d warn" % (ranks, "" if ranks == 1 else "s", fail, warn)
    check(m and m.group(4) == want, "%s: context %r, expected %r" % (what, m and m.group(4), want))
    # the scaling figure always with its noise: "88.8 % ±5.0", or "cannot tell (88.8 % ±92.8)"; "-" on 1 rank
    sc = r"(-|[0-9.]+ % ±[0-9.]+|cannot tell \([0-9.]+ % ±[0-9.]+\))"
    check(m and re.search(r"ddp [0-9.]+ ms/step  \S+ samples/s  scaling " + sc + "  busbw \S+ GB/s  weights ",
                          m.group(3) or ""), "%s: figures %r" % (what, line))
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
        outcome(doc, line, verdict, code, what)
        jobrec = {r["metric"]: r["value"] for r in doc.get("records", []) if r.get("measurement") == "job"}
        e, n = jobrec.get("scaling_efficiency"), jobrec.get("scaling_efficiency_noise")
        if ranks > 1 and isinstance(e, (int, float)) and isinstance(n, (int, float)):
            fig = "%.1f %% ±%.1f" % (100 * e, 100 * n)
            tell = n <= 0.25 and not (e - n <= 1 <= e + n)
            check((("scaling " + fig) if tell else ("scaling cannot tell (" + fig + ")")) in line,
                  "%s: scaling %s (noise %s) in %r" % (what, e, n, line))
        else:
            check(ranks == 1 or "scaling_efficiency_noise" in jobrec,
                  "%s: the job's scaling_efficiency and its noise are records: %r" % (what, jobrec))
    else:
        check(False, "%s: no JSON written" % what)
    return out


# ---- run: pass, warn (a given peak below what the step does), fail (a rank's weights differ) -------------
out = run_case([], "PASS", 0, 2, 0, 0, "run-pass")
check("weights identical" in last(out), "run-pass: weights identical in %r" % last(out))
run_case(["--peak-tflops", "0.000001"], "WARN", 0, 1, 0, 2, "run-warn")
out = run_case([], "FAIL", 1, 2, 2, 0, "run-fail", env={"DDPBENCH_TEST_CORRUPT_RANK": "1"})
check("weights DIFFER" in last(out), "run-fail: weights DIFFER in %r" % last(out))
# --strategy fsdp without its training phase: the line names the strategy, not ddp
rc, out, err = job(2, SMALL + ["--strategy", "fsdp", "--phases", "comm"])
check(rc == 0 and "  fsdp - ms/step  " in last(out), "fsdp, comm phase only: %r" % last(out))

# ---- --quiet: the findings that are not passes and the bottom line ---------------------------------------
rc, out, err = job(2, SMALL + ["--quiet"])
lines = [x for x in out.splitlines() if x.strip()]
check(rc == 0 and len(lines) == 1 and LINE.match(lines[0]), "--quiet pass: stdout is one bottom line: %r" % out)
check("[ddpbench]" not in err, "--quiet: no progress lines on stderr: %r" % err[-500:])
rc, out, err = job(1, SMALL + ["--quiet", "--peak-tflops", "0.000001"])
lines = [x for x in out.splitlines() if x.strip()]
check(rc == 0 and LINE.match(lines[-1]) and all(x.startswith("#") for x in lines[:-1]) and
      sum("  warn  " in x for x in lines) == 2 and not any("  info  " in x for x in lines),
      "--quiet warn: the two warnings and the line, no info: %r" % out)

# ---- accept: pass on 1 host, fail on 2 emulated hosts ------------------------------------------------------
with open(os.path.join(tmp, "high.ini"), "w") as f:
    f.write("gemm_fp32_tflops = 1000\n")
acc = ["accept", "--health-seconds", "0.2"]
rc, out, err = job(1, acc + ["--json", "acc-pass.json"])
line = last(out)
check(rc == 0 and line.startswith("ddpbench accept: PASS  1 of 1 host pass  (1 rank, 1 host; 0 fail, 0 warn)"),
      "accept pass: %r (exit %d)" % (line, rc))
with open(os.path.join(tmp, "acc-pass.json")) as f:
    outcome(json.load(f), line, "PASS", 0, "accept pass")
rc, out, err = job(2, acc + ["--expect", "high.ini", "--json", "acc-fail.json"], {"DDPBENCH_TEST_RANKS_PER_NODE": "1"})
line = last(out)
check(rc == 4 and re.match(r"ddpbench accept: FAIL  2 of 2 hosts fail \(node00, node01: see findings", line),
      "accept fail: %r (exit %d)\n%s" % (line, rc, err[-1500:]))
with open(os.path.join(tmp, "acc-fail.json")) as f:
    d = json.load(f)
outcome(d, line, "FAIL", 4, "accept fail")
acc_fail_counts = re.search(r"; (\d+ fail, \d+ warn)\)$", line)  # 2 hosts: the pairs and 2 ranks may warn 'cannot tell'
check(d.get("failed_hosts") == ["node00", "node01"], "accept fail: failed_hosts %r" % d.get("failed_hosts"))

with open(os.path.join(tmp, "warn.ini"), "w") as f:  # inside a huge warn band above a tiny floor
    f.write("warn_pct = 1e12\ngemm_fp32_tflops = 0.000001\n")
rc, out, err = job(1, acc + ["--expect", "warn.ini", "--json", "acc-warn.json"])
line = last(out)
check(rc == 0 and re.match(r"ddpbench accept: WARN  0 of 1 host pass  1 warn \([^)]+\)", line) is not None
      and line.endswith("; 0 fail, 1 warn)"), "accept warn: %r (exit %d)" % (line, rc))
with open(os.path.join(tmp, "acc-warn.json")) as f:
    outcome(json.load(f), line, "WARN", 0, "accept warn")

# ---- collectives, doctor, topo, export -----------------------------------------------------------------------
rc, out, err = job(2, ["collectives", "allreduce", "-b", "1K", "-e", "8K", "-f", "2", "--json", "coll.json"])
line = last(out)
# nccl-tests' convention: a line that is not a table row starts with '#', the bottom line too
check(line.startswith("# "), "collectives: the bottom line starts with '# ': %r" % line)
line = line[2:]
check(rc == 0 and re.match(r"ddpbench collectives: PASS  allreduce busbw \S+ GB/s at 8\.00 KiB  0 wrong values  "
                           r"\(2 ranks, 1 host; 0 fail, 0 warn\)$", line), "collectives: %r (exit %d)" % (line, rc))
with open(os.path.join(tmp, "coll.json")) as f:
    outcome(json.load(f), line, "PASS", 0, "collectives")
rc, out, err = job(2, ["collectives", "allreduce", "-b", "1K", "-e", "8K", "-f", "2", "--json", "coll-bad.json"],
                   {"DDPBENCH_TEST_CORRUPT_COLLECTIVE": "1:5"})
line = last(out)[2:]
check(rc != 0 and re.match(r"ddpbench collectives: FAIL  allreduce busbw \S+ GB/s at 8\.00 KiB  [1-9]\d* wrong values? ", line),
      "collectives with a wrong element: %r (exit %d)" % (line, rc))
if os.path.exists(os.path.join(tmp, "coll-bad.json")):
    with open(os.path.join(tmp, "coll-bad.json")) as f:
        outcome(json.load(f), line, "FAIL", rc, "collectives fail")
rc, out, err = job(2, ["doctor"])
check(LINE.match(last(out)) and last(out).startswith("ddpbench doctor: "), "doctor: %r" % last(out))
rc, out, err = plain(["topo"])
check(rc == 0 and re.match(r"ddpbench topo: PASS  \d+ GPUs?, \d+ NICs?, \d+ NUMA nodes? \(this machine\)", last(out)),
      "topo: %r" % last(out))
rc, out, err = plain(["topo", "--json"])
try:
    json.loads(out)
    check(True, "")
except ValueError:
    check(False, "topo --json: stdout is not JSON alone: %r" % out[-300:])
check(last(err).startswith("ddpbench topo: PASS"), "topo --json: the bottom line on stderr: %r" % last(err))
rc, out, err = plain(["export", "run-pass.json", "--csv", "exp.csv", "--label", "side=old"])
check(rc == 0 and re.match(r"ddpbench export: PASS  wrote exp\.csv  source: run of \S+, PASS", last(out)),
      "export: %r (exit %d) %s" % (last(out), rc, err))
# export of a failed accept: its own verdict PASS (it wrote everything), the source's FAIL and counts after it;
# the textfile keeps the source's end time
rc, out, err = plain(["export", "acc-fail.json", "--prom", "exp-fail.prom", "--csv", "exp-fail.csv"])
m = re.match(r"ddpbench export: PASS  wrote exp-fail\.prom, exp-fail\.csv  source: accept of \S+, FAIL  "
             r"\(([1-9]\d* fail, \d+ warn)\)$", last(out))
check(rc == 0 and m and acc_fail_counts and m.group(1) == acc_fail_counts.group(1),
      "export of a failed accept (the source's counts %r): %r (exit %d) %s"
      % (acc_fail_counts and acc_fail_counts.group(1), last(out), rc, err))
if os.path.exists(os.path.join(tmp, "exp-fail.prom")) and os.path.exists(os.path.join(tmp, "acc-fail.json")):
    with open(os.path.join(tmp, "acc-fail.json")) as f:
        end = json.load(f).get("end_time", "")
    want = calendar.timegm(time.strptime(end, "%Y-%m-%dT%H:%M:%SZ"))
    with open(os.path.join(tmp, "exp-fail.prom")) as f:
        got = [float(x.split()[-1]) for x in f if x.startswith("ddpbench_run_end_time_seconds")]
    check(got == [want], "export --prom keeps the source's end time %s: %s" % (end, got))
    # for alerting and draining: 0 or 1 for every host and every check judged about a host
    with open(os.path.join(tmp, "exp-fail.prom")) as f:
        hf = [x.split() for x in f if x.startswith("ddpbench_host_failed{")]
    failed = sorted(set(re.search(r'host="([^"]*)"', x[0]).group(1) for x in hf if x[1] == "1"))
    check(failed == ["node00", "node01"] and all(x[1] in ("0", "1") for x in hf),
          "ddpbench_host_failed is 1 for both failing hosts: %s" % hf)
    with open(os.path.join(tmp, "exp-fail.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    fr = [r for r in rows if r["measurement"] == "finding"]
    check(fr and all(r["text"] for r in fr) and {r["host"] for r in fr if "severity=fail" in r["labels"]} ==
          {"node00", "node01"}, "the CSV has the findings as rows with their text: %s" % fr[:2])

# ---- outputs to "-" ------------------------------------------------------------------------------------------
rc, out, err = job(2, SMALL + ["--json", "-", "--label", "side=A", "--label", "nccl=2.21.5"])
check(rc == 0, "--json -: exit %d\n%s" % (rc, err[-1000:]))
jq = subprocess.run(["jq", "-r", ".verdict + \" \" + .labels.side + \" \" + .labels.nccl"], input=out,
                    capture_output=True, text=True, timeout=30)
check(jq.returncode == 0 and jq.stdout.strip() == "PASS A 2.21.5", "--json - | jq: %r %r" % (jq.stdout, jq.stderr))
check(last(err).startswith("ddpbench run: PASS"), "--json -: the bottom line ends stderr: %r" % last(err))
check("# ddpbench" in err and "# ddpbench" not in out, "--json -: the report on stderr, not stdout")
check(not os.path.exists(os.path.join(tmp, "-")), "--json -: no file named -")

rc, out, err = job(2, SMALL + ["--csv", "-", "--label", "side=B"])
# pandas is Debian's (python3-pandas, for /usr/bin/python3), whichever Python runs this test
PANDAS = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
pd = subprocess.run([PANDAS, "-c", "import sys, pandas; df = pandas.read_csv(sys.stdin); "
                     "print(len(df), sorted(set(df['run_labels'])), df['run_id'].nunique(), 'value' in df.columns)"],
                    input=out, capture_output=True, text=True, timeout=120)
if "No module named 'pandas'" in pd.stderr:
    check(False, "pandas is not installed (python3-pandas; launch/test.sh installs it)")
else:
    got = pd.stdout.split()
    check(rc == 0 and pd.returncode == 0 and len(got) >= 4 and int(got[0]) > 10 and "['side=B']" == got[1] and
          got[2] == "1" and got[3] == "True", "--csv - | pandas.read_csv: %r %r" % (pd.stdout, pd.stderr[-500:]))

rc, out, err = job(2, SMALL + ["--prom", "-", "--label", "side=A"])
pt = subprocess.run(["promtool", "check", "metrics"], input=out, capture_output=True, text=True, timeout=60) \
    if shutil.which("promtool") else None
check(rc == 0 and (pt is None or pt.returncode == 0), "--prom - | promtool: %s" % (pt and pt.stdout + pt.stderr))
series = [x for x in out.splitlines() if x and not x.startswith("#")]
check(series and all('side="A"' in x for x in series), "--prom -: every series has side=\"A\": %r" %
      [x for x in series if 'side="A"' not in x][:3])

rc, out, err = job(2, SMALL + ["--json", "-", "--csv", "-"])
check(rc == 2 and len(err.strip().splitlines()) == 1 and "more than one output is -" in err,
      "two outputs to -: exit %d, %r" % (rc, err))
# The launcher signals the ranks still exiting once one has left with a non-zero code: the decided 2 stays 2.
for slow in (0, 1):
    rc, out, err = job(2, SMALL + ["--json", "-", "--csv", "-"], env={"DDPBENCH_TEST_FAULT": "stall:%d:exit" % slow})
    check(rc == 2 and "terminated (SIGTERM)" not in err, "two outputs to -, rank %d slow to exit: exit %d, %r" %
          (slow, rc, err))
rc, out, err = job(2, SMALL + ["--json", "/dev/stdout"])
check(rc == 2 and "give - to write to standard output" in err, "/dev/stdout: exit %d, %r" % (rc, err))
for bad in ["side", "9x=1", "kind=run", "a=b,", "__x=1"]:
    rc, out, err = job(2, SMALL + ["--label", bad])
    check(rc == 2 and len(err.strip().splitlines()) == 1 and "--label" in err, "--label %s: exit %d, %r" % (bad, rc, err))

# ---- launch/run.sh: mpirun -q keeps a one-line error one line ------------------------------------------------
if len(sys.argv) > 3:
    p = subprocess.run([os.path.join(sys.argv[3], "launch", "run.sh"), "-np", "2", "--hidden", "abc"], cwd=tmp,
                       env=dict(os.environ, DDPBENCH_BIN=prog), capture_output=True, text=True, timeout=120)
    errs = [x for x in p.stderr.splitlines() if x.strip()]
    check(p.returncode == 2 and len(errs) == 1 and "--hidden" in errs[0] and "mpirun" not in p.stderr,
          "launch/run.sh --hidden abc: exit %d, stderr %r" % (p.returncode, p.stderr))

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(pycheck.summary())
