#!/usr/bin/env python3
"""test_plot: launch/plot.py draws from recorded results, and what it draws is the files' numbers.

  - a fresh 2-rank --sweep run on the CPU device: scaling (from the sweep's records), heatmap and busbw;
  - the synthetic fixture with 3 hosts (tests/data/fixtures/result-pairs.json): the hosts x GPUs heat map with the
    straggler named by the run's finding outlined, and the node-pair busbw matrix (largest message per pair);
  - `ddpbench accept --json` on 4 emulated nodes (DDPBENCH_TEST_RANKS_PER_NODE=1, the CPU device): the node-pair
    busbw matrix from the real pair records, every cell equal to its record and to the pair's line in the text;
  - an H200 run from results/ (schema version 1, read through `ddpbench export --json`) with its 1-GPU run:
    the scaling curve across runs and the heat map;
  - an fsdp run from results/ (one H100): the heat map of the fsdp phase's step time;
  - the compare chart from compare JSON: the fixture (tests/data/fixtures/compare-ab.json) and `ddpbench compare
    --format json` of 4 + 4 sweep runs, which must carry the sweep's rows (scaling@first:k ...);
  - the soak time series of `ddpbench accept --soak` documents: the fixtures (tests/data/fixtures/accept-soak-v4.json,
    complete, and its interim copy, running) and one made from the fixture with a GPU's figures (temperatures),
    a node pair measured every other interval, a failing and a warning finding that say when, and an hour's time
    axis (minutes): every point equals the section's value at the index its sidecar names, the marks the findings'.
For every plot: PNG (its signature) and SVG (parses as XML, holds the title and axis labels) are written, and
every value in the data sidecar equals the record it names, looked up independently in the result file (read
with the C reader for version 1, through `ddpbench export --json`): heat-map cells, pair cells, busbw points,
efficiency points (x 100), step times; the compare chart's points equal the compare file's change and CI.
Marks an operator must see (trust_checks): pair cells to 2 significant figures, failing hosts and pairs marked, a
failed or interrupted soak's title says so, a busbw tick at every measured size, series at one size side by side.
Hand-edited inputs (wrong types, Infinity, deep nesting): one line naming the file and key, exit 2.
argv: ddpbench mpiexec source_dir. Exit 77 when Matplotlib is missing. Ends with "N passed, N failed".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def python_with_matplotlib():
    for py in [sys.executable, "/usr/bin/python3"]:
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return py
    return None


def model(prog, path, tmp):
    """The records of a result file as the C reader gives them."""
    out = os.path.join(tmp, "model-%s" % os.path.basename(path))
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([prog, "export", path, "--json", out], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "export --json %s: %s" % (path, p.stderr))
    with open(out) as f:
        return json.load(f)


def lookup(doc, ident):
    hits = [r for r in doc["records"] if r["measurement"] == ident["measurement"] and r["group"] == ident["group"]
            and r["metric"] == ident["metric"] and r["labels"] == ident["labels"]]
    return hits[0]["value"] if len(hits) == 1 else None


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def files_ok(out, name, words):
    png, svg, data = (os.path.join(out, name + ext) for ext in (".png", ".svg", ".data.json"))
    check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "%s: a PNG" % png)
    ok = os.path.exists(svg)
    text = open(svg).read() if ok else ""
    try:
        ET.fromstring(text)
    except ET.ParseError:
        ok = False
    check(ok, "%s: an SVG that parses" % svg)
    for w in words:  # title and axis labels (Matplotlib keeps text as comments/ids in SVG: search the source)
        check(w in text, "%s: shows %r" % (svg, w))
    check(os.path.exists(data), "%s: a data sidecar" % data)
    return json.load(open(data)) if os.path.exists(data) else {}


def run_plot(py, src, out, args):
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([py, os.path.join(src, "launch/plot.py"), "--out", out] + args, capture_output=True, text=True,
                       timeout=300, env=env)
    check(p.returncode == 0, "plot.py %s: %s" % (" ".join(args), p.stderr[-2000:]))
    return p.stdout


def soak_value(doc, source):
    """The value a soak sidecar point names, e.g. soak.gpus[1].tflops[3], looked up in the document."""
    m = re.fullmatch(r"soak\.(gpus|links)\[(\d+)\]\.(\w+)\[(\d+)\]", source)
    if not m:
        return "bad source %r" % source
    return doc["soak"][m.group(1)][int(m.group(2))][m.group(3)][int(m.group(4))]


def soak_points_ok(doc, sc, what):
    pts = [(s, p) for pan in sc.get("panels", []) for s in pan["series"] for p in s["points"]]
    check(pts and all(p["y"] == soak_value(doc, p["source"]) for _, p in pts),
          "%s: every point = the soak section's value (%d)" % (what, len(pts)))
    ends = {iv["interval"]: iv["t1_s"] for iv in doc["soak"]["intervals"]}
    check(all(p["t_s"] == ends[p["interval"]] and close(p["x"], p["t_s"] / sc["x_scale_s"]) for _, p in pts),
          "%s: x = the interval's end time" % what)
    return pts


def soak_checks(py, src, tmp):
    fxd = os.path.join(src, "tests/data/fixtures")
    out = os.path.join(tmp, "p7")
    run_plot(py, src, out, [os.path.join(fxd, "accept-soak-v4.json"), os.path.join(fxd, "accept-soak-running-v4.json")])
    for name, state in (("accept-soak-v4", "complete"), ("accept-soak-running-v4", "running")):
        doc = json.load(open(os.path.join(fxd, name + ".json")))
        sc = files_ok(out, "soak-" + name, ["GEMM fp32 TFLOP/s", "temperature (C)", "allreduce busbw (GB/s)",
                                            "seconds since the soak started", "(%s" % state, "vm/r0", "vm/r1"])
        check(sc.get("state") == state and sc.get("x_scale_s") == 1, "%s: state %s, seconds" % (name, state))
        if state == "running":  # no run state in the document: the soak section's, and what it may mean
            check("INCOMPLETE" in sc.get("title", "") and "(running when written" in sc.get("title", ""),
                  "%s: titled INCOMPLETE, running when written: %r" % (name, sc.get("title", "")[:120]))
        pts = soak_points_ok(doc, sc, name)
        tf = [p for s, p in pts if p["source"].endswith("]") and ".tflops[" in p["source"]]
        check(len(tf) == 2 * doc["soak"]["intervals_complete"], "%s: a throughput point per GPU and interval" % name)
        check(sc.get("marks") == [], "%s: no finding marked (none says when)" % name)

    # made from the fixture: what a GPU soak has that the CPU device's has not
    doc = json.load(open(os.path.join(fxd, "accept-soak-v4.json")))
    s = doc["soak"]
    n = s["intervals_complete"]
    for iv in s["intervals"]:  # an hour: 15 min intervals
        iv["t0_s"], iv["t1_s"] = iv["interval"] * 900.0 - 900.0, iv["interval"] * 900.0
    for k, g in enumerate(s["gpus"]):
        g["temperature_c"] = [60.0 + 3 * i + k for i in range(n)]
        g["tflops"][1] = None  # a GEMM not measured in interval 2: a gap
    s["links"].append({"name": "vm-vm2", "kind": "pair", "busbw_gbs": [40.0 if i % 2 == 0 else None for i in range(n)]})
    base = {"scope": "gpu", "host": "vm", "rank": 1, "measured": 1.0, "expected": 0.0, "unit": "", "text": "t"}
    doc["findings"] += [dict(base, check="soak_xid", severity="fail", subject="GPU1  (vm, rank 1)", interval=3, t_s=2000.0),
                        dict(base, check="soak_throttle", severity="warn", subject="GPU1  (vm, rank 1)", interval=2, t_s=1500.0),
                        dict(base, check="soak_steady", severity="info", subject="GPU0", interval=1, t_s=100.0)]
    sj = os.path.join(tmp, "soak-gpu.json")
    json.dump(doc, open(sj, "w"))
    out = os.path.join(tmp, "p7b")
    run_plot(py, src, out, [sj])
    sc = files_ok(out, "soak", ["minutes since the soak started", "1 failing (red), 1 warning (orange dashed)", "pair vm-vm2"])
    check(sc.get("x_scale_s") == 60, "an hour's soak: minutes")
    pts = soak_points_ok(doc, sc, "synthetic soak")
    check(any(p["source"] == "soak.gpus[0].tflops[1]" and p["y"] is None for _, p in pts), "a null figure stays null")
    temps = [p for s_, p in pts if ".temperature_c[" in p["source"]]
    check(len(temps) == 2 * n and temps[0]["y"] == 60.0, "temperatures drawn per GPU and interval")
    check([(m["t_s"], m["x"], m["severity"], m["interval"]) for m in sc.get("marks", [])] ==
          [(1500.0, 25.0, "warn", 2), (2000.0, 2000.0 / 60, "fail", 3)],
          "the failing and warning findings marked at their t_s (info ones not): %s" % sc.get("marks"))


def sig_figs(label):
    """The significant digits a cell's label shows: "0.0012" 2, "0.067" 2, "2.4" 2, "187" 3."""
    return len(label.replace(".", "").lstrip("0"))


def trust_checks(py, src, tmp):
    """What an operator must see without reading the numbers: the pair matrix's cells to 2 significant figures and
    its failing hosts and pairs marked; a failing or interrupted soak says so in its title; a busbw tick at every
    measured size; series at one size drawn side by side. Files made here from the fixtures."""
    fxd = os.path.join(src, "tests/data/fixtures")
    # the pair matrix: three pairs a thousand times apart, node-a on the drain list, pair 0-1 failing
    doc = json.load(open(os.path.join(fxd, "result-pairs.json")))
    want = {"pair:0-1": 0.0012, "pair:0-2": 0.067, "pair:1-2": 2.4}
    for x in doc["records"]:
        if x["group"] in want and x["labels"].get("bytes") == "67108864":
            x["value"] = want[x["group"]]
    doc.update(verdict="FAIL", failed_hosts=["node-a"])
    doc["findings"].append({"severity": "fail", "check": "pair_busbw", "scope": "pair", "host": "", "rank": -1,
                            "subject": "node-a<->node-b nodes 0-1", "measured": 0.0012, "expected": 2.0, "unit": "GB/s",
                            "text": "this pair alone is slow"})
    pj = os.path.join(tmp, "pairs-fail.json")
    json.dump(doc, open(pj, "w"))
    out = os.path.join(tmp, "t1")
    run_plot(py, src, out, [pj])
    pm = files_ok(out, "pairs", ["FAIL", "1 of 3 hosts fail", "1 failing pair outlined in red", "0.0012", "0.067"])
    cells = pm.get("cells", [])
    check(sorted(c.get("label", "") for c in cells) == ["0.0012", "0.067", "2.4"], "pair cells labelled 0.0012, 0.067, 2.4: %s" %
          [c.get("label") for c in cells])
    check(cells and all(sig_figs(c.get("label", "")) >= 2 and abs(float(c.get("label", "nan")) - c["y"]) <= 0.05 * c["y"] for c in cells),
          "every pair cell's label: 2 significant figures, within 5 %% of its value")
    check(pm.get("failed_hosts") == ["node-a"], "the failing host marked: %s" % pm.get("failed_hosts"))
    check(sorted((c["a"], c["b"], c.get("severity")) for c in cells) == [(0, 1, "fail"), (0, 2, None), (1, 2, None)],
          "the failing pair (0-1) marked, and only it: %s" % [(c["a"], c["b"], c.get("severity")) for c in cells])
    check(pm.get("title", "").startswith("FAIL "), "the pair matrix's title starts with the verdict")

    # a failed soak whose failing findings say no time, and interrupted soaks (the document's state, or its absence)
    doc = json.load(open(os.path.join(fxd, "accept-soak-v4.json")))
    doc.update(verdict="FAIL", exit_code=4, failed_hosts=["vm"])
    doc["findings"].append({"severity": "fail", "check": "gemm_fp32", "scope": "gpu", "host": "vm", "rank": 1,
                            "subject": "rank 1 cpu", "interval": None, "t_s": None, "measured": 0.05, "expected": 4.9,
                            "unit": "TFLOP/s", "text": "below the floor"})
    sj = os.path.join(tmp, "soak-fail.json")
    json.dump(doc, open(sj, "w"))
    run_doc = json.load(open(os.path.join(fxd, "accept-soak-running-v4.json")))
    ij = os.path.join(tmp, "soak-int.json")
    json.dump(dict(run_doc, state="interrupted"), open(ij, "w"))
    out = os.path.join(tmp, "t2")
    run_plot(py, src, out, [sj, ij])
    sc = files_ok(out, "soak-soak-fail", ["FAIL", "failing hosts", "vm/r1 FAIL", "1 failing, 0 warning finding with no time",
                                          "gemm_fp32 (vm)"])
    check(sc.get("title", "").startswith("FAIL ") and "(complete)" in sc.get("title", ""),
          "a failed soak's title: FAIL, complete: %r" % sc.get("title", "")[:80])
    check([(f["severity"], f["check"]) for f in sc.get("undated", [])] == [("fail", "gemm_fp32")],
          "the failing finding with no time listed: %s" % sc.get("undated"))
    sc = files_ok(out, "soak-soak-int", ["INCOMPLETE", "(interrupted)"])
    check(sc.get("state") == "interrupted", "the document's state read: %s" % sc.get("state"))

    # busbw: DDP's bucket sizes (3 MiB, 12 MiB) among powers of two, and accept's three pairs at one size
    doc = json.load(open(os.path.join(fxd, "result-pairs.json")))
    base = {"measurement": "comm", "group": "world", "metric": "allreduce_busbw_gbs", "unit": "GB/s"}
    recs = [dict(base, labels={"bytes": str(b)}, value=1.0 + b / 2 ** 24) for b in (1 << 20, 3 << 20, 1 << 22, 12 << 20)]
    recs += [{"measurement": "allreduce", "group": "pair:%d-%d" % ab, "metric": "busbw_gbs", "unit": "GB/s",
              "labels": {"bytes": "4194304", "hosts": "x,y"}, "value": 0.5 + ab[1]} for ab in ((0, 1), (0, 2), (1, 2))]
    doc["records"] = recs
    bj = os.path.join(tmp, "bw.json")
    json.dump(doc, open(bj, "w"))
    out = os.path.join(tmp, "t3")
    run_plot(py, src, out, [bj])
    bw = files_ok(out, "busbw", ["3 MiB", "12 MiB"])
    sizes = sorted({p["x"] for s in bw.get("series", []) for p in s["points"]})
    ticks = bw.get("x_ticks", [])
    check(sizes and all(any(close(t, x) for t in ticks) for x in sizes), "a tick at every measured size: %s in %s" %
          (sizes, ticks))
    at4 = [p.get("x_drawn", p["x"]) for s in bw.get("series", []) for p in s["points"] if p["x"] == 4194304]
    check(len(at4) == 4 and len(set(at4)) == 4 and all(abs(x / 4194304 - 1) < 0.2 for x in at4),
          "the 4 series at 4 MiB drawn side by side, near 4 MiB: %s" % at4)
    # a sweep of 17 sizes: labels at powers of 2^k, a tick still at every size
    recs = [dict(base, labels={"bytes": str(b)}, value=1.0) for b in [1 << k for k in range(10, 26)] + [3 << 20]]
    doc["records"] = recs
    json.dump(doc, open(bj, "w"))
    out = os.path.join(tmp, "t4")
    run_plot(py, src, out, [bj])
    bw = files_ok(out, "busbw", [])
    ticks = bw.get("x_ticks", [])
    check(all(any(close(t, float(r["labels"]["bytes"])) for t in ticks) for r in recs),
          "17 sizes: a tick at every one (%d ticks)" % len(ticks))


def hostile_inputs(py, src, tmp):
    """Hand-edited or foreign files: one line naming the file and the key, exit 2, never a traceback."""
    base = json.load(open(os.path.join(src, "tests/data/fixtures/accept-soak-v4.json")))
    inf = json.loads(json.dumps(base))
    inf["soak"]["gpus"][0]["tflops"][0] = float("inf")  # Python writes Infinity, which no JSON parser of ours takes
    cases = {"deep": (None, "nested too deep"), "ranks_number": (dict(base, ranks=5), "ranks"),
             "severity_number": (dict(base, findings=[dict(f, severity=3) for f in base["findings"]]), "severity"),
             "failed_hosts_string": (dict(base, failed_hosts="node01"), "failed_hosts"),
             "soak_string": (dict(base, soak="x"), "soak"), "infinity": (inf, "Infinity"),
             "record_value_string": (dict(base, records=[dict(base["records"][0], value="1")]), "records[0].value")}
    for name, (doc, key) in cases.items():
        f = os.path.join(tmp, "hostile-%s.json" % name)
        with open(f, "w") as fh:
            fh.write('{"schema_version": 4, "x": %s1%s}' % ("[" * 5000, "]" * 5000) if doc is None else json.dumps(doc))
        p = subprocess.run([py, os.path.join(src, "launch/plot.py"), "--out", os.path.join(tmp, "h"), f],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, MPLBACKEND="Agg"))
        err = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(err) == 1 and f in err[0] and key in err[0],
              "%s: exit 2, one line naming the file and %r: %d %r" % (name, key, p.returncode, err[-1:]))


def main():
    if len(sys.argv) < 4:
        print("usage: test_plot.py DDPBENCH MPIEXEC SOURCE_DIR", file=sys.stderr)
        return 1
    prog, mpiexec, src = sys.argv[1:4]
    py = python_with_matplotlib()
    if not py:
        print("Matplotlib not installed (launch/test.sh installs python3-matplotlib): skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="ddpbench-test-plot-")
    try:
        # 1. a sweep run
        js = os.path.join(tmp, "sweep.json")
        p = subprocess.run(["timeout", "300", mpiexec, "-np", "2", "--oversubscribe", prog, "--hidden", "64", "--layers",
                            "3", "--batch", "16", "--steps", "6", "--warmup", "1", "--comm", "mpi", "--progress", "none", "--sweep",
                            "--json", js], capture_output=True, text=True)
        check(p.returncode == 0, "sweep run: %s" % p.stderr[-1500:])
        out = os.path.join(tmp, "p1")
        run_plot(py, src, out, [js, "--ddpbench", prog])
        doc = json.load(open(js))
        sc = files_ok(out, "scaling", ["GPUs (ranks in the group)", "weak-scaling efficiency (%)", "Scaling: 64 x 3 x 16 fp32"])
        pts = [p for s in sc.get("series", []) for p in s["points"]]
        check([p["x"] for p in pts] == [1, 2], "sweep curve at 1 and 2 GPUs: %s" % [p["x"] for p in pts])
        for p in pts:
            check(close(p["y"] / 100, lookup(doc, p["record"])), "efficiency point %s = record x 100" % p["record"])
            check(close(p["step_ms"], lookup(doc, dict(p["record"], metric="step_ms"))), "step time of %s" % p["record"]["group"])
        hm = files_ok(out, "heatmap", ["GPU (device ordinal on the host)", "host", "median step time (ms)"])
        cells = hm.get("cells", [])
        check(len(cells) == 2 and all(close(c["y"], lookup(doc, c["record"])) for c in cells), "heat-map cells = records")
        bw = files_ok(out, "busbw", ["message size (bytes)", "bus bandwidth (GB/s)"])
        bpts = [p for s in bw.get("series", []) for p in s["points"]]
        check(bpts and all(close(p["y"], lookup(doc, p["record"])) and p["x"] == float(p["record"]["labels"]["bytes"])
                           for p in bpts), "busbw points = records (%d)" % len(bpts))

        # 1b. an A/B of files of one name in two folders (as launch/ab.sh writes them): sides named by the result's
        #     "labels" where it has them, else by the folder; one colour a side; per-side heat maps never overwrite
        for side, labels in (("A", None), ("B", {"side": "B"})):
            os.makedirs(os.path.join(tmp, "ab", side), exist_ok=True)
            d = dict(doc)
            if labels:
                d["labels"] = labels
            json.dump(d, open(os.path.join(tmp, "ab", side, "run-01.json"), "w"))
        out = os.path.join(tmp, "p1b")
        run_plot(py, src, out, [os.path.join(tmp, "ab", s, "run-01.json") for s in "AB"] + ["--ddpbench", prog])
        bw = files_ok(out, "busbw", ["A vs side=B", "side: series"])
        check(bw.get("sides") == ["A", "side=B"], "sides by folder and by labels: %s" % bw.get("sides"))
        ser = bw.get("series", [])
        cols = {s["side"]: {x["colour"] for x in ser if x["side"] == s["side"]} for s in ser}
        check(len(cols) == 2 and all(len(c) == 1 for c in cols.values()) and cols["A"] != cols["side=B"],
              "one colour a side, two sides two colours: %s" % cols)
        check(all(s["label"].startswith(s["side"] + ": ") for s in ser), "every legend entry starts with its side")
        check(all(len(line) <= 90 for line in bw.get("title", "").split("\n")), "the title's lines fit the figure")
        check(all(os.path.exists(os.path.join(out, "heatmap-%s-run-01.png" % s)) for s in ("A", "side=B")),
              "a heat map per side: heatmap-A-run-01, heatmap-side=B-run-01")
        # Matplotlib missing: one line naming the package, exit 2
        fake = os.path.join(tmp, "nompl", "matplotlib")
        os.makedirs(fake)
        open(os.path.join(fake, "__init__.py"), "w").write("raise ImportError('no')\n")
        p = subprocess.run([py, os.path.join(src, "launch/plot.py"), js], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=os.path.dirname(fake)))
        check(p.returncode == 2 and "python3-matplotlib" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              "no Matplotlib: exit 2, one line naming python3-matplotlib: %d %r" % (p.returncode, p.stderr))
        check(("for %s " % py) in p.stderr and ("%s -m pip install matplotlib" % py) in p.stderr,
              "no Matplotlib: the line names the Python that lacks it (%s)" % py)

        # 2. the 3-host fixture: heat map with the straggler, pair matrix
        fx = os.path.join(src, "tests/data/fixtures/result-pairs.json")
        out = os.path.join(tmp, "p2")
        run_plot(py, src, out, [fx, "--ddpbench", prog])
        fdoc = model(prog, fx, tmp)
        hm = files_ok(out, "heatmap", ["stragglers outlined", "node-a", "node-c"])
        cells = hm.get("cells", [])
        check(len(cells) == 6 and all(close(c["y"], lookup(fdoc, c["record"])) for c in cells), "6 cells = records")
        check(hm.get("hosts") == ["node-a", "node-b", "node-c"], "hosts as rows: %s" % hm.get("hosts"))
        check([c["rank"] for c in cells if c["straggler"]] == [4], "rank 4 outlined (the finding's rank)")
        check(all(c["gpu"] == c["rank"] % 2 for c in cells), "each rank in its GPU column")
        pm = files_ok(out, "pairs", ["node-pair allreduce bus bandwidth (GB/s)", "node (host)"])
        pc = pm.get("cells", [])
        check(len(pc) == 3 and all(close(c["y"], lookup(fdoc, c["record"])) for c in pc), "3 pair cells = records")
        check(sorted(c["record"]["labels"]["bytes"] for c in pc) == ["67108864"] * 3, "each pair at its largest message")
        check(pm.get("nodes") == ["node-a", "node-b", "node-c"], "pair matrix names the hosts")

        # 2b. the pair records of a real `ddpbench accept --json`: 4 emulated nodes of one rank, tournament
        aj = os.path.join(tmp, "accept.json")
        p = subprocess.run(["timeout", "240", mpiexec, "-np", "4", "--oversubscribe", "-x", "DDPBENCH_TEST_RANKS_PER_NODE=1",
                            "-x", "OPENBLAS_NUM_THREADS=1", prog, "accept", "--device", "cpu", "--skip", "gemm",
                            "--relative-warn-pct", "99", "--relative-fail-pct", "99", "--pair-mib", "1", "--node-mib", "1",
                            "--json", aj], capture_output=True, text=True)
        check(p.returncode == 0 and os.path.exists(aj), "accept on 4 emulated nodes: exit %d %s" % (p.returncode, p.stderr[-1500:]))
        if os.path.exists(aj):
            adoc = json.load(open(aj))
            recs = [x for x in adoc["records"] if x["measurement"] == "allreduce" and x["group"].startswith("pair:")]
            check(len(recs) == 6 and all(x["measurement"] == "allreduce" and x["metric"] == "busbw_gbs" and x["unit"] == "GB/s"
                                         and x["labels"]["bytes"] == "1048576" for x in recs),
                  "accept --json: one allreduce busbw_gbs record per pair of 4 nodes, 1 MiB: %s" % recs[:1])
            out = os.path.join(tmp, "p2b")
            run_plot(py, src, out, [aj, "--ddpbench", prog])
            pm = files_ok(out, "pairs", ["node-pair allreduce bus bandwidth (GB/s)", "node (host)"])
            pc = pm.get("cells", [])
            check(len(pc) == 6 and all(close(c["y"], lookup(adoc, c["record"])) for c in pc), "6 pair cells = accept's records")
            check(sorted((c["a"], c["b"]) for c in pc) == [(a, b) for a in range(4) for b in range(a + 1, 4)],
                  "every pair of the tournament in the matrix")
            check(pm.get("nodes") == ["node00", "node01", "node02", "node03"], "pair matrix names the emulated hosts")
            names = pm.get("nodes", [])
            for c in pc:  # the text's line for the pair, " round R   nodeA - nodeB: 2.36" (accept's %.3g below 100)
                v = c["y"]
                text = "%.1f" % v if abs(v) >= 100 or v == 0 else "%.3g" % v
                line = "%s - %s: %s" % (names[c["a"]], names[c["b"]], text) if len(names) == 4 else "?"
                check(line in p.stdout, "cell %d-%d equals accept's printed figure (%s)" % (c["a"], c["b"], line))

        # 3. an H200 run (schema version 1) with its 1-GPU run: across-run scaling and the heat map
        h = os.path.join(src, "results/2026-11-29-h200x2-ef026ba")
        one, two = (os.path.join(h, "h200-8192x8x1024-bf16-ddpbench-%dgpu.json" % n) for n in (1, 2))
        out = os.path.join(tmp, "p3")
        run_plot(py, src, out, [one, two, "--ddpbench", prog])
        d1, d2 = model(prog, one, tmp), model(prog, two, tmp)
        sc = files_ok(out, "scaling", ["NVIDIA H200", "NCCL 2.28.3", "8192 x 8 x 1024 bf16"])
        pts = [p for s in sc.get("series", []) for p in s["points"]]
        check([p["x"] for p in pts] == [1, 2], "H200 curve at 1 and 2 GPUs")
        if len(pts) == 2:
            base = lookup(d1, pts[0]["record"])
            step = lookup(d2, pts[1]["record"])
            check(close(pts[0]["step_ms"], base) and close(pts[1]["step_ms"], step), "H200 step times = records")
            check(close(pts[1]["y"], base / step * 100), "H200 2-GPU efficiency = 1-GPU step / 2-GPU ddp step")
        hm = files_ok(out, "heatmap-h200-8192x8x1024-bf16-ddpbench-2gpu",
                      ["NVIDIA H200", "h200-8192x8x1024-bf16-ddpbench-2gpu: per-rank ddp step time"])
        check(len(hm.get("cells", [])) == 2 and all(close(c["y"], lookup(d2, c["record"])) for c in hm.get("cells", [])),
              "H200 heat map cells = records")

        # 3b. an fsdp run (results/, one H100): the heat map reads the fsdp phase's step time, not a ddp one
        f = os.path.join(src, "results/2026-12-06-h100x1-fsdp/fsdp/h200-8192x8x8192-bf16-fsdp.json")
        out = os.path.join(tmp, "p3b")
        run_plot(py, src, out, [f, "--ddpbench", prog])
        fd, raw = model(prog, f, tmp), json.load(open(f))
        hm = files_ok(out, "heatmap",  # one file: its heat map has no run name in the file name
                      ["NVIDIA H100", "h200-8192x8x8192-bf16-fsdp: per-rank fsdp step time"])
        cells = hm.get("cells", [])
        check(len(cells) == 1 and all(c["record"]["measurement"] == "fsdp" and close(c["y"], lookup(fd, c["record"]))
                                      for c in cells), "fsdp heat map: its cell is the fsdp phase's record")
        check(len(cells) == 1 and abs(cells[0]["y"] - raw["phases"]["fsdp"]["step_ms"]["median"]) < 1e-6 * cells[0]["y"],
              "fsdp heat map: the cell is the fsdp phase's median step (%s)" % [c["y"] for c in cells])

        # 4. the compare chart
        cf = os.path.join(src, "tests/data/fixtures/compare-ab.json")
        out = os.path.join(tmp, "p4")
        run_plot(py, src, out, ["--compare", cf])
        cm = files_ok(out, "compare", ["change B vs A (%)", "nccl-2.27", "nccl-2.28"])
        cdoc = json.load(open(cf))
        want = {m["name"]: m for m in cdoc["metrics"]}
        got = cm.get("points", [])
        check(len(got) == 4, "a point per metric with a change")
        check(cm.get("xscale") == "symlog", "compare: a symmetric log axis (small and large changes together)")
        check(all(close(p["y"], want[p["metric"]]["change_pct"]) and p["ci"] == (want[p["metric"]]["ci_pct"] or [None, None])
                  for p in got), "change and CI = the compare file's")

        # 5. compare's own JSON of two sets of sweep runs (4 + 4: compare tests significance from 4 a side):
        #    it reads the sweep's rows, and the chart shows its numbers
        sides = []
        for side in ("A", "B"):
            d = os.path.join(tmp, side)
            os.mkdir(d)
            for i in range(4):
                p = subprocess.run(["timeout", "120", mpiexec, "-np", "2", "--oversubscribe", prog, "--hidden", "32",
                                    "--layers", "2", "--batch", "8", "--steps", "4", "--warmup", "1", "--comm", "mpi",
                                    "--progress", "none", "--sweep", "--json", os.path.join(d, "r%d.json" % i)],
                                   capture_output=True, text=True)
                check(p.returncode == 0, "A/B sweep run %s%d" % (side, i))
            sides.append(d)
        cj = os.path.join(tmp, "cmp.json")
        with open(cj, "w") as f:
            p = subprocess.run([prog, "compare", sides[0], sides[1], "--format", "json"], stdout=f, stderr=subprocess.PIPE,
                               text=True, timeout=120)
        check(p.returncode in (0, 5), "compare exits 0 or 5: %d %s" % (p.returncode, p.stderr))
        creal = json.load(open(cj))
        names = {m["name"] for m in creal["metrics"]}
        check({"scaling@first:1 step_ms", "scaling@first:2 step_ms", "scaling@first:2 efficiency"} <= names,
              "compare reads the sweep's rows: %s" % sorted(n for n in names if "scaling@" in n))
        out = os.path.join(tmp, "p5")
        run_plot(py, src, out, ["--compare", cj])
        cm = files_ok(out, "compare", ["change B vs A (%)", "scaling@first:2 step_ms"])
        want = {m["name"]: m for m in creal["metrics"]}
        got = cm.get("points", [])
        check(len(got) == sum(1 for m in creal["metrics"] if m["change_pct"] is not None), "a point per metric with a change")
        check(all(close(p["y"], want[p["metric"]]["change_pct"]) and p["ci"] == (want[p["metric"]]["ci_pct"] or [None, None])
                  for p in got), "real compare: change and CI = the compare file's")

        # 6. the soak time series
        soak_checks(py, src, tmp)

        # 6b. failing hosts, pairs and soaks marked; 2 significant figures; a tick at every size; series dodged
        trust_checks(py, src, tmp)

        # 7. bad input: exit 2, one line naming the file
        bad = os.path.join(tmp, "bad.json")
        open(bad, "w").write("{\"x\": 1}")
        p = subprocess.run([py, os.path.join(src, "launch/plot.py"), "--out", tmp, bad], capture_output=True, text=True)
        check(p.returncode == 2 and bad in p.stderr and len(p.stderr.strip().splitlines()) == 1, "not a result: exit 2")
        hostile_inputs(py, src, tmp)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        pycheck.summary()  # the counts' line, on every exit path


if __name__ == "__main__":
    rc = main()
    sys.exit(rc if rc else (1 if pycheck.failed else 0))
