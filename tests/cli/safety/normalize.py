#!/usr/bin/env python3
"""normalize.py: the normalisation behind capture.sh (python3 standard library only).

  normalize.py errline STDERR_FILE      the first stderr line that starts with "ddpbench" (else the first
                                        non-empty one), normalised, on one line
  normalize.py messages STDERR_FILE     every stderr line that starts with "ddpbench" or "[ddpbench rank",
                                        normalised, joined by " | "
  normalize.py case STDERR CASE_DIR FIXTURE_DIR   errline, messages and the files CASE_DIR has beyond
                                        FIXTURE_DIR, as three lines (one process per case: it is faster)
  normalize.py records JSON_FILE SUB    the sorted identities of a result document's records
                                        (doctor: of its findings)
  normalize.py findings JSON_FILE       the sorted (check, scope) set of a result document's findings
  normalize.py keys JSON_FILE           top-level keys, config keys and the key paths of a document
  normalize.py prom FILE                a node_exporter textfile's series, values dropped
  normalize.py csv FILE                 a CSV's header and its distinct (measurement, group, metric) rows
  normalize.py text FILE                any text, normalised line by line (file names, ...)

What varies between runs or machines is replaced, everywhere: the capture's temp dirs (environment
variables SAFETY_CASE_DIR -> TMP, SAFETY_WORK -> TMPROOT), the host name (SAFETY_HOST -> HOST, as a
whole word), host#bootid -> HOST#ID, pids, the LONG token's text (SAFETY_LONG -> LONG), PCI bus ids,
dates, and Open MPI job ids. Numbers are left alone except where noted: they are part of the messages.
"""
import json
import os
import re
import sys

CASE = os.environ.get("SAFETY_CASE_DIR", "")
WORK = os.environ.get("SAFETY_WORK", "")
HOST = os.environ.get("SAFETY_HOST", "")
LONG = os.environ.get("SAFETY_LONG", "")


def norm(s):
    if LONG:
        s = s.replace(LONG, "LONG")
        s = re.sub(r"a{200,}", "LONG...", s)  # a message that cut the LONG word short
    if CASE:
        s = s.replace(CASE, "TMP")
    if WORK:
        s = s.replace(WORK, "TMPROOT")
    if HOST:
        h = re.escape(HOST)
        s = re.sub(r"(?<![A-Za-z0-9_.-])" + h + r"#[0-9a-f]+", "HOST#ID", s)
        s = re.sub(r"(?<![A-Za-z0-9_.])" + h + r"-[0-9a-f]{16}\b", "HOST-ID", s)  # hwloc-HOST-BOOTID.xml
        s = re.sub(r"(?<![A-Za-z0-9_.-])" + h + r"(?![A-Za-z0-9_-])", "HOST", s)
    s = re.sub(r"\b([Pp]id)([ =:]+)\d+", r"\1\2PID", s)
    s = re.sub(r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]\b", "BUSID", s)
    s = re.sub(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ?\b", "DATE", s)
    s = re.sub(r"\[\[\d+,\d+\],\d+\]", "[[JOB]]", s)
    s = s.replace("\t", " ").rstrip("\r\n")
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group()), s)  # one line, printable


def read_lines(path):
    with open(path, "r", errors="replace") as f:
        return [l.rstrip("\n") for l in f]


def errline_of(lines):
    pick = next((l for l in lines if l.startswith("ddpbench")), None)
    if pick is None:
        pick = next((l for l in lines if l.strip()), "")
    # progress lines carry timings ("[ddpbench] ddp step 3/8 0.0 s"): drop the figures
    if pick.startswith("[ddpbench]"):
        pick = re.sub(r"\d+(\.\d+)? s\b", "N s", pick)
    return norm(pick)


def errline(path):
    print(errline_of(read_lines(path)))


def messages_of(lines):
    """Every stderr line of ddpbench's own (not its progress lines, not mpirun's), joined by ' | '."""
    return " | ".join(norm(l) for l in lines if l.startswith("ddpbench") or l.startswith("[ddpbench rank"))


def messages(path):
    print(messages_of(read_lines(path)))


def tree(top):
    out = set()
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), top))
    return out


def case(stderr, case_dir, fixture_dir):
    """The three per-case results in one process: errline, messages, the files the case left behind."""
    lines = read_lines(stderr)
    made = tree(case_dir) - tree(fixture_dir) - {"dir", "emptydir", os.path.join("dir", "file")}
    print(errline_of(lines))
    print(messages_of(lines))
    print(" ".join(sorted(norm(x) for x in made)) or "-")


def labels_text(labels):
    if not isinstance(labels, dict):
        return norm(json.dumps(labels, sort_keys=True))
    return ",".join("%s=%s" % (k, norm(str(v))) for k, v in sorted(labels.items()))


def records(path, sub):
    with open(path) as f:
        d = json.load(f)
    counts = {}
    if sub == "doctor" or ("records" not in d and "findings" in d):
        for x in d.get("findings", []):
            key = "\t".join(norm(str(x.get(k, ""))) for k in ("check", "severity", "scope", "subject"))
            counts[key] = counts.get(key, 0) + 1
        print("# check\tseverity\tscope\tsubject\tcount")
    else:
        for r in d.get("records", []):
            fields = ",".join(sorted(k for k in r if k != "value"))
            key = "\t".join([norm(str(r.get("measurement"))), norm(str(r.get("group"))), norm(str(r.get("metric"))),
                             labels_text(r.get("labels", {})), str(r.get("unit")), str(r.get("better")), fields])
            counts[key] = counts.get(key, 0) + 1
        print("# measurement\tgroup\tmetric\tlabels\tunit\tbetter\tfields\tcount")
    for k in sorted(counts):
        print("%s\t%d" % (k, counts[k]))


# checks whose presence depends on timing: "overlap" is an info finding written only when the ddp step falls
# outside local .. local + comm beyond the step times' spread (about 1 run in 8 of configs/ci.ini on 2 cores
# lacks it)
TIMING_CHECKS = {"overlap"}


def findings(path):
    with open(path) as f:
        d = json.load(f)
    s = sorted(set("%s\t%s" % (x.get("check"), x.get("scope")) for x in d.get("findings", [])
                   if x.get("check") not in TIMING_CHECKS))
    print("# check\tscope (severity and subject left out, and the checks %s: they depend on timing)"
          % ", ".join(sorted(TIMING_CHECKS)))
    for x in s:
        print(x)


# subtrees whose keys are data (variable names, host names), not schema: only their own key is listed
DATA_KEYED = {"environment", "env", "nccl_env"}


def paths(v, prefix, out):
    if isinstance(v, dict):
        for k, x in v.items():
            p = prefix + "." + norm(k) if prefix else norm(k)
            out.add(p)
            if k in DATA_KEYED:
                continue
            paths(x, p, out)
    elif isinstance(v, list):
        for x in v:
            paths(x, prefix + "[]", out)


def keys(path):
    with open(path) as f:
        d = json.load(f)
    print("# top-level keys")
    for k in sorted(d) if isinstance(d, dict) else []:
        print(k)
    cfg = d.get("config") if isinstance(d, dict) else None
    if isinstance(cfg, dict):
        print("# config keys")
        for k in sorted(cfg):
            print(k)
    elif isinstance(cfg, list):
        print("# config keys")
        for k in sorted(set(str(x.get("key", x)) if isinstance(x, dict) else str(x) for x in cfg)):
            print(k)
    print("# key paths (arrays as [], the keys of %s not followed)" % ", ".join(sorted(DATA_KEYED)))
    out = set()
    paths(d, "", out)
    for p in sorted(out):
        print(p)


def prom(path):
    out = set()
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                out.add(norm(line) if line.startswith("# TYPE") or line.startswith("# HELP") else "#")
                continue
            m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s", line)
            if not m:
                out.add("?" + norm(line))
                continue
            lab = m.group(3) or ""
            lab = re.sub(r'="(?:[^"\\]|\\.)*"', "", lab)  # label names only: values vary (bytes, ranks)
            out.add("%s{%s}" % (m.group(1), lab))
    for x in sorted(out):
        print(x)


def csvfile(path):
    import csv
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(f))
    if not rows:
        return
    print("# header")
    print(",".join(rows[0]))
    h = rows[0]
    idx = [h.index(c) for c in ("measurement", "group", "metric") if c in h]
    print("# distinct %s" % ",".join(h[i] for i in idx))
    for x in sorted(set(",".join(norm(r[i]) for i in idx) for r in rows[1:] if len(r) == len(h))):
        print(x)


def text(path):
    with open(path, errors="replace") as f:
        for line in f:
            print(norm(line))


def main():
    cmd = sys.argv[1]
    if cmd == "errline":
        errline(sys.argv[2])
    elif cmd == "case":
        case(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "messages":
        messages(sys.argv[2])
    elif cmd == "records":
        records(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
    elif cmd == "findings":
        findings(sys.argv[2])
    elif cmd == "keys":
        keys(sys.argv[2])
    elif cmd == "prom":
        prom(sys.argv[2])
    elif cmd == "csv":
        csvfile(sys.argv[2])
    elif cmd == "text":
        text(sys.argv[2])
    else:
        sys.exit("normalize.py: unknown command " + cmd)


if __name__ == "__main__":
    main()
