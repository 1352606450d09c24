#!/usr/bin/env python3
"""test_outputs_hostile: what a crafted result file or odd bytes from argv and the environment can do to the
outputs, through the one output layer (result/prom.c, csv.c, outputs.c):

  - export --prom of a result whose record has a newline and a fake sample in its measurement, metric and unit,
    label keys "" and "0x", a label value that is not UTF-8: promtool accepts the file, no line is a sample that
    the record did not make, every label name is valid, every byte is UTF-8;
  - export --csv of the same: a cell that a spreadsheet would run as a formula (=HYPERLINK(...), +, @, -x) is
    quoted with a ' in front, negative numbers stay numbers, the file is UTF-8;
  - result files that JSON readers read differently (trailing garbage, two documents, a key twice): refused
    with exit 2, naming the file;
  - --label Host=x, Kind=x, Side=A beside side=a, '', a value with U+0085, U+2028 or U+202E: exit 2 naming the
    label; labels named as ddpbench's own or a record's (device, Phase, BYTES): the file stays valid, every series
    keeps its own;
  - --json - to a pipe whose reader is gone, with --csv FILE: the CSV is written and the exit code is 3 (a
    passing run), 5 (non-finite) singleton, 3 or 1 (weights differ) through launch/run.sh and run-hosts.sh,
    never SIGPIPE's 141;
  - a run with NCCL_FOO set to the byte 0xfe and a --json path holding 0xff 0xfe: Python's json module (strict
    UTF-8) reads the document, and the value reads as U+FFFD.
argv: ddpbench mpiexec source_dir. Exit 77 without promtool. Ends with "N passed, N failed".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def utf8(body, what):
    """The text of body, checked to be UTF-8 (strictly, as Python's json and csv read it)."""
    try:
        text = body.decode("utf-8")
        check(True, "%s is UTF-8" % what)
    except UnicodeDecodeError as e:
        check(False, "%s is UTF-8: %s" % (what, e))
        text = body.decode("utf-8", "replace")
    return text


def main():
    prog, mpiexec, src = sys.argv[1], sys.argv[2], sys.argv[3]
    if not shutil.which("promtool"):
        print("promtool not installed: skipped")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="ddpbench-hostile-") as tmp:
        base = os.path.join(tmp, "run.json")
        r = subprocess.run([prog, "--config", os.path.join(src, "configs/ci.ini"), "--device", "cpu", "--progress", "none",
                            "--json", base], env=env, capture_output=True, timeout=120)
        check(r.returncode == 0, "the base run: exit %d %s" % (r.returncode, r.stderr[-500:]))
        doc = json.load(open(base))
        rec = dict(doc["records"][0])
        rec["measurement"] = "evil\nddpbench_evil 1\n# HELP"
        rec["metric"] = "x\ny"
        rec["unit"] = "ms\nddpbench_evil2 2"
        rec["labels"] = {"": "2", "0x": "3", "k": "v@@BAD@@", "cell": "=HYPERLINK(\"http://x\",\"y\")",
                         "plus": "+1+2", "at": "@SUM(A1)", "dash": "-x", "neg": "-5"}
        doc["records"].append(rec)
        rec2 = dict(doc["records"][0])  # for the CSV: texts a spreadsheet would run, at the start of cells
        rec2.update({"group": "=HYPERLINK(\"http://x\",\"y\")", "measurement": "+1+2", "metric": "@SUM(A1)",
                     "unit": "-x", "labels": {"=cmd": "1", "neg": "-5"}})
        doc["records"].append(rec2)
        text = json.dumps(doc).replace("@@BAD@@", "\\u00ff")  # placeholder, made a raw 0xff byte below
        raw = text.encode().replace("\\u00ff".encode(), b"\xff")
        crafted = os.path.join(tmp, "crafted.json")
        open(crafted, "wb").write(raw)
        prom, csv = os.path.join(tmp, "x.prom"), os.path.join(tmp, "x.csv")
        r = subprocess.run([prog, "export", crafted, "--prom", prom, "--csv", csv], env=env, capture_output=True,
                           timeout=60)
        check(r.returncode == 0, "export of the crafted file: exit %d %s" % (r.returncode, r.stderr[-500:]))
        body = open(prom, "rb").read()
        ptext = utf8(body, "the .prom file")
        pt = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=60)
        check(pt.returncode == 0 or b"error" not in (pt.stdout + pt.stderr).lower(),
              "promtool accepts it: %s" % (pt.stdout + pt.stderr)[-800:])
        lines = ptext.splitlines()
        check(not any(re.match(r"ddpbench_evil2? ", l) for l in lines), "no injected sample line")
        check(not any(l.startswith("# HELP") and "\n" in l for l in lines), "HELP lines are one line each")
        helps = [l for l in lines if l.startswith("# HELP ddpbench_evil")]
        check(len(helps) == 1 and "\\n" in helps[0], "the crafted HELP keeps its newlines escaped: %s" % helps)
        names = set()
        for l in lines:
            if l.startswith("#") or "{" not in l:
                continue
            for k in re.findall(r'[{,]([^=,{}]*)="', l):
                names.add(k)
        check(names and all(re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", k) for k in names),
              "every label name is valid: %s" % sorted(names))
        evil = [l for l in lines if l.startswith("ddpbench_evil")]
        samples = [l for l in lines if "k=\"v" in l]
        check(len(samples) == 1 and "v\ufffd" in samples[0], "the 0xff byte reads as U+FFFD: %s" % samples)
        ctext = utf8(open(csv, "rb").read(), "the CSV")
        import csv as csvmod
        rows = list(csvmod.reader(ctext.splitlines()))
        row = [r for r in rows if len(r) > 3 and "HYPERLINK" in r[1]]
        check(len(row) == 1, "the crafted row is there: %d" % len(row))
        if row:
            x = row[0]
            check(x[0] == "'+1+2" and x[1].startswith("'=HYPERLINK(") and x[2] == "'@SUM(A1)" and x[3] == "'-x",
                  "formula-like cells start with a ': %s" % x[:4])
            check(any(c.startswith("'=cmd=1") for c in x), "the labels cell too: %s" % x)
            nums = [c for c in x[10:18] if c]  # value .. n (then run_id, start_time, run_labels)
            check(nums and all(re.fullmatch(r"-?[0-9.e+-]+", c) for c in nums), "numbers stay numbers: %s" % nums)
        bad = [c for r in rows for c in r if c and c[0] in "=+@"]
        check(not bad, "no cell starts with =, + or @: %s" % bad[:5])

        # L6: a file that JSON readers read differently is refused, naming the file and why (exit 2)
        good = open(base, "rb").read().rstrip()
        cases = {"garbage": good + b" xyz", "two": good + b"\n" + good,
                 "dupkey": b'{"schema_version": 3, "schema_version": 99, ' + good.lstrip()[1:]}
        for name, body in cases.items():
            f = os.path.join(tmp, name + ".json")
            open(f, "wb").write(body)
            r = subprocess.run([prog, "export", f, "--csv", os.path.join(tmp, name + ".csv")], env=env,
                               capture_output=True, timeout=60)
            want = b"appears twice in one object" if name == "dupkey" else b"more after the JSON document"
            check(r.returncode == 2 and want in r.stderr and f.encode() in r.stderr,
                  "%s: exit %d, %s" % (name, r.returncode, r.stderr[-300:]))

        # --label: a key that is a reserved one or another label in another case (Prometheus label names are
        # written in lower case: node_exporter would refuse the whole file), an empty label (it once erased
        # every label before it), a value with a C1 control, a line separator or a bidirectional override:
        # refused, exit 2, naming the label, no file written
        lp = os.path.join(tmp, "l.prom")
        refused = {"Host=x": "Host", "Kind=x": "Kind", "MODE=x": "MODE", "Check=x": "Check",
                   "Severity=x": "Severity", "side=A,Side=a": "Side", "": "erase the labels given before",
                   "x=a\u0085b": "'x'", "x=a\u2028b": "'x'", "x=a\u202eb": "'x'"}
        for given, named in refused.items():
            if os.path.exists(lp):
                os.remove(lp)
            args = [prog, "export", base, "--prom", lp, "--label", "a=1", "--label", given]
            r = subprocess.run(args, env=env, capture_output=True, timeout=60)
            err = r.stderr.decode("utf-8", "replace")
            check(r.returncode == 2 and named in err and len(err.strip().split("\n")) == 1 and
                  not os.path.exists(lp), "--label %r: exit 2 naming it (exit %d): %r" % (given, r.returncode, err))
        # a label named as ddpbench's own info labels or a record's (any case): the series keep their own, the
        # file stays valid
        if os.path.exists(lp):
            os.remove(lp)
        r = subprocess.run([prog, "export", base, "--prom", lp, "--label", "device=x", "--label", "Phase=y",
                            "--label", "BYTES=3", "--label", "nccl_runtime=z"], env=env, capture_output=True, timeout=60)
        check(r.returncode == 0, "labels named as ddpbench's: exit %d %s" % (r.returncode, r.stderr[-300:]))
        if os.path.exists(lp):
            pt = subprocess.run(["promtool", "check", "metrics"], stdin=open(lp), capture_output=True, timeout=60)
            check(pt.returncode == 0, "promtool accepts it: %s" % (pt.stdout + pt.stderr)[-500:])
            dup = [l for l in open(lp) if not l.startswith("#") and "{" in l and
                   len(re.findall(r'[{,]([a-z_0-9]+)="', l)) != len(set(re.findall(r'[{,]([a-z_0-9]+)="', l)))]
            check(not dup, "no series repeats a label name: %s" % dup[:2])
            info = [l for l in open(lp) if l.startswith("ddpbench_info{")]
            check(len(info) == 1 and 'device="cpu"' in info[0] and 'device="x"' not in info[0],
                  "ddpbench_info keeps its own device: %s" % info)

        # A reader of "-" that closed before the output came (`--json - --csv F | true`): an output failure, not
        # SIGPIPE (exit 141, F never written). Singleton and through launch/run.sh (whose relay keeps draining
        # mpirun's output): the other outputs are written, the exit code is 3, or the verdict's when 1, 4 or 5.
        small = ["--hidden", "64", "--layers", "2", "--batch", "8", "--steps", "3", "--warmup", "1", "--device",
                 "cpu", "--progress", "none"]
        run_sh = os.path.join(src, "launch", "run.sh")
        hostfile = os.path.join(tmp, "hosts")
        with open(hostfile, "w") as f:
            f.write("localhost slots=2\n")
        cases = [("singleton pass", [prog] + small, {}, 3),
                 ("singleton non-finite", [prog] + small + ["--inject-nonfinite", "2"], {}, 5),
                 ("run.sh pass", [run_sh, "-np", "2"] + small, {}, 3),
                 ("run.sh weights differ", [run_sh, "-np", "2"] + small, {"DDPBENCH_TEST_CORRUPT_RANK": "1"}, 1),
                 ("run-hosts.sh pass", [os.path.join(src, "launch", "run-hosts.sh"), hostfile] + small,
                  {"DDPBENCH_MPIRUN_ARGS": "-np 2 --oversubscribe -q"}, 3)]
        for what, cmd, extra, want in cases:
            out = os.path.join(tmp, "pipe.csv")
            if os.path.exists(out):
                os.remove(out)
            rd, wr = os.pipe()
            os.close(rd)  # the reader is gone before the first byte
            try:
                r = subprocess.run(cmd + ["--json", "-", "--csv", out], env=dict(env, DDPBENCH_BIN=prog, **extra),
                                   stdout=wr, stderr=subprocess.PIPE, timeout=240)
            finally:
                os.close(wr)
            err = r.stderr.decode("utf-8", "replace")
            check(r.returncode == want and os.path.exists(out) and "standard output" in err,
                  "%s, --json - to a closed pipe: exit %d (want %d), the CSV written: %s\n%s"
                  % (what, r.returncode, want, os.path.exists(out), err[-600:]))

        # L5: bytes that are not UTF-8 from the environment and argv
        odd = os.path.join(tmp.encode(), b"\xff\xfe.json")
        envb = {k.encode(): v.encode() for k, v in env.items()}
        envb[b"NCCL_FOO"] = b"\xfe"
        r = subprocess.run([prog.encode(), b"--config", os.path.join(src, "configs/ci.ini").encode(), b"--device",
                            b"cpu", b"--progress", "none", b"--json", odd], env=envb, capture_output=True, timeout=120)
        check(r.returncode == 0, "a run with odd bytes: exit %d %s" % (r.returncode, r.stderr[-500:]))
        try:
            with open(odd, "rb") as f:
                d = json.loads(f.read().decode("utf-8"))
            check(True, "Python's json reads the document")
            envd = json.dumps(d.get("environment", {}), ensure_ascii=False)
            check("\ufffd" in envd, "NCCL_FOO's 0xfe reads as U+FFFD: %s" % envd[:300])
            check("\ufffd" in " ".join(d.get("command_line", [])) if isinstance(d.get("command_line"), list)
                  else "\ufffd" in str(d.get("command_line")), "the --json path's bytes read as U+FFFD")
        except (OSError, UnicodeDecodeError, ValueError) as e:
            check(False, "Python's json reads the document: %s" % e)
    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main())
