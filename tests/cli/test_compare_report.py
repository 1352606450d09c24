#!/usr/bin/env python3
"""test_compare_report: what `ddpbench compare` says first and last, on synthetic A/B result files where B really
is slower (docs/compare.md). The runs are copies of a recorded run (tests/data/fixtures/run-v3.json) and of a
recorded collectives sweep (collectives-v3.json, widened to 2 collectives x 4 sizes x 2 placements), every value
with a run-to-run noise of a few 0.1 %, and on side B ddp step_ms 7.9 % slower, ddp samples_per_s as much lower
and comm busbw_gbs 6.1 % lower (the sweep: allreduce 1 MiB busbw 6 % lower). Each run has a start time of its
own (compare refuses the same run twice) and "labels" {"nccl": version, "cluster": "x"}. Asserts:
  - 4 + 4 runs: exit 5; the summary leads the report (before the provenance diff and the table) and names the three
    regressions; the last stdout line is "ddpbench compare: FAIL  3 regressions beyond 2 % (ddp step_ms +7.9 %,
    ddp samples_per_s -7.3 %, +1 more)  (A nccl=2.21.5: 4 runs, B nccl=2.23.4: 4 runs; ...; 3 fail, 0 warn)"; the JSON has the same verdict,
    exit code and bottom line, the sides named by their labels, and (with jsonschema) satisfies the schema;
  - B the same as A: PASS, exit 0;
  - 2 + 2 runs: the medians and changes shown, marked "not enough runs to test"; WARN (a median worse beyond the
    threshold), exit 0; 2 + 2 with nothing moved: PASS;
  - the default text of the sweep fits 120 columns (every line but the bottom line) with one row per collective
    and size; --wide shows every metric (lines over 120 columns);
  - --format csv is read by pandas.read_csv as it is: one row per metric, the sides and statuses in columns, no
    '#' line; the bottom line on stderr, not in the data;
  - labels the sides share, or on one side only, leave today's naming; "labels" that is not an object of strings:
    exit 2, one line naming the file;
  - (with python3-jsonschema) the FAIL JSON satisfies docs/result.schema.json, and copies with a verdict, exit code,
    status or side labels that disagree are rejected.
argv: DDPBENCH SOURCE_DIR. Exit 77 without python3-pandas. Ends with "N passed, N failed"."""
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import pandas
except ImportError:
    if os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3":  # Debian's python3-pandas
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("pandas is not installed (apt-get install python3-pandas)", file=sys.stderr)
    print("0 passed, 0 failed")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

PROG, SRC = sys.argv[1], sys.argv[2]
FIX = os.path.join(SRC, "tests", "data", "fixtures")
serial = [0]


def noise(i, name):
    """A deterministic run-to-run noise of -0.4 % to +0.4 %, other for each run and metric."""
    return 1 + 0.002 * ((i * 7 + sum(map(ord, name))) % 5 - 2)


def make_runs(base, folder, n, slower, labels):
    """n copies of base in folder, each with its start time, its noise and labels; slower(rec) -> factor."""
    os.makedirs(folder)
    for i in range(n):
        d = copy.deepcopy(base)
        serial[0] += 1
        d["start_time"] = "2026-12-03T%02d:%02d:%02dZ" % (serial[0] // 3600, serial[0] // 60 % 60, serial[0] % 60)
        if labels is not None:
            d["labels"] = labels
        for r in d["records"]:
            if isinstance(r.get("value"), (int, float)) and r["value"]:
                key = r["measurement"] + r["metric"] + json.dumps(r.get("labels", {}), sort_keys=True)
                r["value"] *= noise(i, key) * slower(r)
        with open(os.path.join(folder, "run-%02d.json" % i), "w") as f:
            json.dump(d, f)
    return folder


def run_slower(r):
    if "rank" in r.get("labels", {}):
        return 1
    if (r["measurement"], r["metric"]) == ("ddp", "step_ms"):
        return 1.079
    if (r["measurement"], r["metric"]) == ("ddp", "samples_per_s"):
        return 1 / 1.079
    if (r["measurement"], r["metric"]) == ("comm", "busbw_gbs"):
        return 0.939
    return 1


def sweep_slower(r):
    lab = r.get("labels", {})
    if r["metric"] == "busbw_gbs" and lab.get("collective") == "allreduce" and lab.get("bytes") == "1048576":
        return 0.94
    return 1


def same(r):
    return 1


def compare(*args):
    p = subprocess.run([PROG, "compare"] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def last_line(text):
    lines = text.rstrip("\n").split("\n")
    return lines[-1] if lines else ""


def wide_sweep(base):
    """The recorded sweep widened to allreduce and all_gather at 4 sizes, both placements (6 compared figures
    each: 96 metrics)."""
    d = copy.deepcopy(base)
    proto = [r for r in base["records"] if r["measurement"] == "collectives" and
             r.get("labels", {}).get("bytes") == "1024" and r["labels"].get("collective") == "allreduce"]
    recs = [r for r in base["records"] if r["measurement"] != "collectives" or "collective" not in r.get("labels", {})]
    for coll, redop in (("allreduce", "sum"), ("all_gather", "none")):
        for size in (1024, 32768, 1048576, 33554432):
            for r in proto:
                x = copy.deepcopy(r)
                x["labels"].update(collective=coll, redop=redop, bytes=str(size), count=str(size // 4))
                x["value"] = r["value"] * (size / 1024) ** (0.5 if "bw" in r["metric"] else 0.7) if r["value"] else 0
                x.pop("stats", None)
                recs.append(x)
    d["records"] = recs
    return d


VALIDATE = """
import copy, json, sys
import jsonschema
schema, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema)
bad = []
for what, change in (("verdict PASS with a regression", lambda d: d.update(verdict="PASS")),
                     ("exit_code 0 with a regression", lambda d: d.update(exit_code=0)),
                     ("a verdict without its bottom line", lambda d: d.pop("bottom_line")),
                     ("an unknown status", lambda d: d["metrics"][0].update(status="slower")),
                     ("a side's labels not strings", lambda d: d["a"].update(labels={"nccl": 2}))):
    d = copy.deepcopy(doc)
    change(d)
    try:
        jsonschema.validate(d, schema)
        bad.append(what)
    except jsonschema.ValidationError:
        pass
print("accepted: " + ", ".join(bad) if bad else "ok")
"""


def schema_check(doc, tmp):
    """doc (a FAIL compare) satisfies docs/result.schema.json and broken copies do not, with whichever python3 has
    jsonschema (Debian's or the one on PATH); skipped without one."""
    path = os.path.join(tmp, "compare.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    for py in [sys.executable, shutil.which("python3"), "/usr/bin/python3"]:
        if not py or subprocess.run([py, "-c", "import jsonschema"], capture_output=True).returncode:
            continue
        p = subprocess.run([py, "-c", VALIDATE, os.path.join(SRC, "docs", "result.schema.json"), path],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and p.stdout.strip() == "ok", "the compare JSON against docs/result.schema.json: "
              "%s%s" % (p.stdout, p.stderr[-800:]))
        return
    print("jsonschema is not installed: the schema check skipped", file=sys.stderr)


def main():
    run = json.load(open(os.path.join(FIX, "run-v3.json")))
    sweep = wide_sweep(json.load(open(os.path.join(FIX, "collectives-v3.json"))))
    la, lb = {"nccl": "2.21.5", "cluster": "x"}, {"nccl": "2.23.4", "cluster": "x"}
    with tempfile.TemporaryDirectory(prefix="ddpbench-compare-report-") as tmp:
        a = make_runs(run, os.path.join(tmp, "a"), 4, same, la)
        b = make_runs(run, os.path.join(tmp, "b"), 4, run_slower, lb)

        # 1. B slower, 4 + 4 runs: FAIL, the summary first, the bottom line last
        rc, out, err = compare(a, "--", b)
        bottom = last_line(out)
        check(rc == 5, "B slower: exit %d (want 5) %s" % (rc, err))
        check(bottom.startswith("ddpbench compare: FAIL  3 regressions beyond 2 % (ddp step_ms +7.9 %, "
                                "ddp samples_per_s -7.3 %, +1 more)  36 unchanged  (A nccl"),
              "the bottom line names the largest regressions: %r" % bottom)
        check("(A nccl=2.21.5: 4 runs, B nccl=2.23.4: 4 runs; noise floor none; 3 fail, 0 warn)" in bottom,
              "the bottom line's context names the sides by their labels: %r" % bottom)
        s, d, t = out.find("summary: FAIL"), out.find("what differs"), out.find("\nmetric ")
        check(0 < s < d < t, "the summary (%d) leads, before the provenance diff (%d) and the table (%d)" % (s, d, t))
        summary = out[s:d]
        check("3 regressed beyond 2 %:" in summary and "ddp step_ms" in summary and "comm busbw_gbs" in summary,
              "the summary lists the two regressions:\n%s" % summary)
        check("noise floor none" in summary and "unchanged" in summary, "the summary gives the noise floor and "
              "the unchanged count:\n%s" % summary)
        check("A = nccl=2.21.5: 4 runs" in out and "B = nccl=2.23.4: 4 runs" in out, "the header names the sides")
        long_lines = [l for l in out.split("\n")[:-2] if len(l) > 120]
        check(not long_lines, "default text within 120 columns: %r" % long_lines[:3])
        print(out)

        rc, js, err = compare(a, "--", b, "--format", "json")
        doc = json.loads(js)
        check(rc == 5 and doc["verdict"] == "FAIL" and doc["exit_code"] == 5 and doc["bottom_line"] == bottom,
              "json: verdict %s exit_code %s bottom_line %r" % (doc.get("verdict"), doc.get("exit_code"),
                                                                  doc.get("bottom_line")))
        check(doc["a"]["label"] == "nccl=2.21.5" and doc["b"]["labels"] == lb and doc["labels"] == {} and
              doc["summary"]["regressed"] == 3 and "start_time" in doc and doc["duration_s"] >= 0,
              "json: sides %s %s, summary %s" % (doc["a"], doc["b"], doc.get("summary")))
        check(err.strip() == bottom, "json: the bottom line on stderr: %r" % err)
        schema_check(doc, tmp)

        # 2. the CSV through pandas as it is
        rc, csv, err = compare(a, "--", b, "--format", "csv")
        check(not any(l.startswith("#") for l in csv.split("\n")), "csv: a '#' line")
        df = pandas.read_csv(io.StringIO(csv))
        row = df[df.metric == "ddp step_ms"]
        check(len(df) == len(doc["metrics"]) and len(row) == 1, "csv: %d rows (json %d metrics)" % (len(df), len(doc["metrics"])))
        check(len(row) == 1 and row.status.iloc[0] == "regressed" and abs(row.change_pct.iloc[0] - 7.9) < 0.5 and
              row.side_a.iloc[0] == "nccl=2.21.5" and row.runs_b.iloc[0] == 4 and row.tested.iloc[0] == 1,
              "csv: the ddp step_ms row: %s" % row.to_dict("records"))
        check(set(df.status) <= {"regressed", "worse", "better", "unchanged", "untested_worse", "untested"} and
              df.status.value_counts().get("regressed") == 3, "csv: statuses %s" % df.status.value_counts().to_dict())
        check(err.strip() == bottom, "csv: the bottom line on stderr, not in the data: %r" % err)

        # 3. B the same as A: PASS
        a2 = make_runs(run, os.path.join(tmp, "a2"), 4, same, la)
        rc, out, err = compare(a, "--", a2)
        check(rc == 0 and last_line(out).startswith("ddpbench compare: PASS  no regression beyond 2 %"),
              "A against A: exit %d, %r" % (rc, last_line(out)))

        # 4. 2 + 2 runs: medians and changes, not enough runs to test; WARN
        fa = make_runs(run, os.path.join(tmp, "fa"), 2, same, la)
        fb = make_runs(run, os.path.join(tmp, "fb"), 2, run_slower, lb)
        rc, out, err = compare(fa, "--", fb)
        bottom = last_line(out)
        rows = [l for l in out.split("\n") if l.startswith("ddp step_ms ")]
        check(rc == 0 and bottom.startswith("ddpbench compare: WARN  3 medians worse beyond 2 %, not enough runs "
                                            "to test (ddp step_ms +7.9 %"), "2 + 2, B slower: exit %d %r" % (rc, bottom))
        check(len(rows) == 1 and "+7.9" in rows[0] and "not enough runs to test" in rows[0] and "? worse" in rows[0],
              "2 + 2: the ddp step_ms row shows the change, marked not tested: %r" % rows)
        check("0 fail, 3 warn" in bottom, "2 + 2: the warnings counted: %r" % bottom)
        rc, js, _ = compare(fa, "--", fb, "--format", "json")
        doc = json.loads(js)
        m = [x for x in doc["metrics"] if x["name"] == "ddp step_ms"]
        check(doc["verdict"] == "WARN" and doc["exit_code"] == 0 and m and m[0]["status"] == "untested_worse" and
              m[0]["change_pct"] > 7 and m[0]["verdict"] == "?", "2 + 2 json: %s %s" % (doc["verdict"], m))
        fa2 = make_runs(run, os.path.join(tmp, "fa2"), 2, same, la)
        rc, out, err = compare(fa, "--", fa2)
        check(rc == 0 and last_line(out).startswith("ddpbench compare: PASS  no median worse beyond 2 %, not enough "
                                                    "runs to test"), "2 + 2 unchanged: %r" % last_line(out))

        # 5. the sweep: compact by default, --wide for everything
        sa = make_runs(sweep, os.path.join(tmp, "sa"), 4, same, {"nccl": "2.21.5"})
        sb = make_runs(sweep, os.path.join(tmp, "sb"), 4, sweep_slower, {"nccl": "2.23.4"})
        rc, out, err = compare(sa, "--", sb)
        lines = out.rstrip("\n").split("\n")
        long_lines = [l for l in lines[:-1] if len(l) > 120]
        table = "\n".join(lines[:-1])[out.find("\nmetric "):]
        rows = [l for l in table.split("\n") if " KiB busbw_gbs" in l or " MiB busbw_gbs" in l]
        check(rc == 5 and not long_lines, "sweep: exit %d, lines over 120 columns: %r" % (rc, long_lines[:3]))
        check(len(rows) == 8 and "allreduce 1 MiB busbw_gbs" in table and " time_us" not in table,
              "sweep: one row per collective and size (%d):\n%s" % (len(rows), table))
        check("allreduce 1 MiB busbw_gbs -6.0 %" in lines[-1], "sweep: the bottom line names it: %r" % lines[-1])
        rc, wide, err = compare(sa, "--", sb, "--wide")
        names = json.loads(compare(sa, "--", sb, "--format", "json")[1])["metrics"]
        check(len(names) > 90 and all(m["name"] in wide for m in names) and max(map(len, wide.split("\n"))) > 120,
              "--wide: every one of %d metrics, as wide as it takes" % len(names))
        print(out)

        # 6. labels that do not tell the sides apart, and bad ones
        na = make_runs(run, os.path.join(tmp, "na"), 4, same, {"cluster": "x"})
        nb = make_runs(run, os.path.join(tmp, "nb"), 4, same, {"cluster": "x"})
        nc = make_runs(run, os.path.join(tmp, "nc"), 4, same, None)
        for x, y, what in ((na, nb, "the same labels"), (na, nc, "labels on side A only")):
            rc, out, err = compare(x, "--", y)
            check(rc == 0 and "A = 4 runs (" in out and "(A: 4 runs, B: 4 runs;" in last_line(out),
                  "%s: today's naming: %r" % (what, last_line(out)))
        bad = make_runs(run, os.path.join(tmp, "bad"), 1, same, {"nccl": 2})
        rc, out, err = compare(na, "--", bad)
        check(rc == 2 and err.count("\n") == 1 and "run-00.json" in err and "labels" in err,
              "labels not strings: exit %d %r" % (rc, err))
    return pycheck.summary()


sys.exit(main())
