#!/usr/bin/env python3
"""plot.py: pictures of ddpbench result files, for a review or a dashboard. PNG and SVG of each, and beside each
a data sidecar (NAME.data.json) holding every plotted value with the record it came from, so that a test (and a
reader) can check that the picture shows the file's numbers.

usage: launch/plot.py [--out DIR] [--compare COMPARE.json ...] [--ddpbench PATH] RESULT.json ...

From the result files' records (result model, docs/ARCHITECTURE.md; schema version 1 files are read through
`ddpbench export --json`, the C reader's one mapping from the old layout to records):
  scaling   weak-scaling efficiency against GPUs, node boundaries marked: the sweep's records (--sweep), or, for
            files without a sweep, the world ddp step of runs of one config at different sizes
  heatmap   per-rank median ddp step time, hosts x GPUs, ranks named by a straggler finding outlined
  pairs     node-pair bus bandwidth matrix (allreduce busbw_gbs records over groups "pair:<a>-<b>", as
            `ddpbench accept --json` writes them)
  busbw     bus bandwidth against message size, log axes: a line per side and series (a side's runs: their
            median, their range as an error bar), one colour per side
  compare   change per metric with its confidence interval, from `ddpbench compare --format json` output, on a
            symmetric log axis (linear within +-10 %) with every value written
  soak      `ddpbench accept --soak` (the document's "soak" section, interim or complete): each GPU's GEMM
            throughput and temperature, and each link's busbw, against the interval's end time; failing findings
            of the soak marked where they happened (t_s)
Sides (A/B): a file's side is its result's "labels" (--label side=A) when it has any, else its folder; per-file
plots of files that share a name are named by side (heatmap-side=A-run-01). docs/plots.md has the details.
A plot whose records are absent is skipped with a note. Needs Python 3 and Matplotlib (Debian:
python3-matplotlib); ddpbench itself never needs Python. Renders headless (Agg).
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

plt = Rectangle = LogNorm = FixedLocator = FuncFormatter = LogLocator = NullFormatter = NullLocator = None


def import_matplotlib():
    """Matplotlib, headless (Agg), imported once the inputs are read (a bad file is told without the wait); without
    it, one line naming the Python that lacks it and exit 2."""
    global plt, Rectangle, LogNorm, FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LogNorm
        from matplotlib.patches import Rectangle
        from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator
    except ImportError:
        print("plot.py: Matplotlib is not installed for %s (the Python running plot.py): install python3-matplotlib "
              "(Debian) for /usr/bin/python3, or `%s -m pip install matplotlib`" % (sys.executable, sys.executable),
              file=sys.stderr)
        sys.exit(2)


HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print("plot.py: %s" % msg, file=sys.stderr)
    sys.exit(2)


# ---- reading ------------------------------------------------------------------------------------------
def ddpbench_path(given):
    for p in [given, os.environ.get("DDPBENCH"), os.path.join(HERE, "../build/dev/ddpbench"),
              os.path.join(HERE, "../build/gpu/ddpbench"), shutil.which("ddpbench")]:
        if p and os.access(p, os.X_OK):
            return p
    return None


def read_json(path):
    """A JSON file, or one line naming it and exit 2: unreadable, not JSON, NaN or Infinity (which JSON has not and
    ddpbench never writes), or nested too deep for Python's parser."""
    def constant(name):
        raise ValueError("%s is not a JSON number (a ddpbench file never holds one)" % name)
    try:
        with open(path) as f:
            return json.load(f, parse_constant=constant)
    except (OSError, ValueError) as e:
        die("%s: %s" % (path, e))
    except RecursionError:
        die("%s: nested too deep to be a ddpbench file" % path)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def shape_error(doc):
    """What in a result document's layout plot.py cannot read ("key: what it must be"), or None. Checks the keys
    the plots read, so that a hand-edited or foreign file is one line and exit 2, never a traceback."""
    def list_of(key, v, kind, what):
        if not isinstance(v, list) or not all(isinstance(x, kind) for x in v):
            return "%s: must be a list of %s" % (key, what)
        return None
    for key, kind, what in (("records", dict, "objects"), ("ranks", dict, "objects"), ("findings", dict, "objects"),
                            ("failed_hosts", str, "host names")):
        if key in doc and doc[key] is not None:
            e = list_of(key, doc[key], kind, what)
            if e:
                return e
    for i, x in enumerate(doc.get("records") or []):
        for k in ("measurement", "group", "metric"):
            if not isinstance(x.get(k), str):
                return "records[%d].%s: must be a string" % (i, k)
        if not isinstance(x.get("labels"), dict) or not all(isinstance(v, str) for v in x["labels"].values()):
            return "records[%d].labels: must be an object of strings" % i
        if x.get("value") is not None and not is_num(x["value"]):
            return "records[%d].value: must be a number or null" % i
    for i, f in enumerate(doc.get("findings") or []):
        for k in ("severity", "check", "subject", "text", "host"):
            if f.get(k) is not None and not isinstance(f[k], str):
                return "findings[%d].%s: must be a string" % (i, k)
        if f.get("t_s") is not None and not is_num(f["t_s"]):
            return "findings[%d].t_s: must be a number or null" % i
    for i, x in enumerate(doc.get("ranks") or []):
        if not isinstance(x.get("host", ""), str) or not isinstance(x.get("device", {}) or {}, dict):
            return "ranks[%d]: host must be a string, device an object" % i
    for k, kind in (("labels", dict), ("soak", dict), ("world_size", int), ("nodes", int)):
        if doc.get(k) is not None and not isinstance(doc[k], kind):
            return "%s: must be %s" % (k, "an object" if kind is dict else "a whole number")
    s = doc.get("soak")
    if isinstance(s, dict):
        for k in ("intervals", "gpus", "links"):
            e = list_of("soak." + k, s.get(k) or [], dict, "objects")
            if e:
                return e
        for i, iv in enumerate(s.get("intervals") or []):
            if not is_num(iv.get("t1_s")):
                return "soak.intervals[%d].t1_s: must be a number" % i
        for sect, keys in (("gpus", ("tflops", "temperature_c")), ("links", ("busbw_gbs",))):
            for i, g in enumerate(s.get(sect) or []):
                for k in keys:
                    v = g.get(k) or []
                    if not isinstance(v, list) or not all(x is None or is_num(x) for x in v):
                        return "soak.%s[%d].%s: must be a list of numbers or nulls" % (sect, i, k)
    return None


def load(path, prog):
    """The result model of a file: {"path", "doc"} with doc holding records (any schema version)."""
    doc = read_json(path)
    if not isinstance(doc, dict) or "schema_version" not in doc:
        die("%s: not a ddpbench result (no schema_version)" % path)
    if not is_num(doc["schema_version"]):
        die("%s: schema_version: must be a number" % path)
    if doc["schema_version"] < 2 or "records" not in doc:
        exe = ddpbench_path(prog)
        if not exe:
            die("%s: schema version %s needs `ddpbench export --json` to read; give --ddpbench PATH" %
                (path, doc.get("schema_version")))
        with tempfile.TemporaryDirectory() as t:
            out = os.path.join(t, "model.json")
            p = subprocess.run([exe, "export", path, "--json", out], capture_output=True, text=True, timeout=120)
            if p.returncode:
                die("%s: %s" % (path, p.stderr.strip()))
            doc = read_json(out)
    e = shape_error(doc) if isinstance(doc, dict) else "not an object"
    if e:
        die("%s: %s" % (path, e))
    return {"path": path, "name": os.path.splitext(os.path.basename(path))[0], "doc": doc}


def side_of(path, doc):
    """The side a file belongs to: its result's "labels" (e.g. side=A, nccl=2.21.5) when it has any, else its folder."""
    labels = doc.get("labels")
    if isinstance(labels, dict) and labels:
        return ",".join("%s=%s" % kv for kv in sorted(labels.items()))
    return os.path.basename(os.path.dirname(os.path.abspath(path))) or "."


def name_sides(rs):
    """Gives every input its side and a name unique among the inputs (side-prefixed where two files share a name)."""
    for r in rs:
        r["side"] = side_of(r["path"], r["doc"])
    dup = len({r["name"] for r in rs}) != len(rs)
    for r in rs:
        if dup:
            r["name"] = "%s-%s" % (re.sub(r"[^A-Za-z0-9._=-]+", "_", r["side"]), r["name"])
    seen = {}
    for r in rs:  # still the same (one side's labels on files of one name in two folders): number them
        n = seen.get(r["name"], 0)
        seen[r["name"]] = n + 1
        if n:
            r["name"] = "%s-%d" % (r["name"], n + 1)


def records(r, measurement=None, group=None, metric=None):
    for x in r["doc"].get("records", []):
        if measurement and x["measurement"] != measurement:
            continue
        if group and x["group"] != group:
            continue
        if metric and x["metric"] != metric:
            continue
        yield x


def ident(x):
    return {"measurement": x["measurement"], "group": x["group"], "metric": x["metric"], "labels": x["labels"]}


def config_text(r):
    c = r["doc"].get("config", {})
    if not isinstance(c, dict):
        c = {k["key"]: k["value"] for k in c} if c and isinstance(c[0], dict) else {}
    if r["doc"].get("kind") == "collectives" or "collectives" in c:
        lo, hi = c.get("minbytes"), c.get("maxbytes")
        sizes = "%s..%s" % (size_text(float(lo)), size_text(float(hi))) if lo is not None and hi is not None else "? sizes"
        return "collectives %s, %s, %s %s" % (c.get("collectives", "?"), sizes, c.get("datatype", "?"), c.get("op", "?"))
    if r["doc"].get("kind") == "accept":
        return "accept"
    graph = c.get("cuda_graph") in (True, "true")
    return "%s x %s x %s %s%s" % (c.get("hidden", "?"), c.get("layers", "?"), c.get("batch", "?"), c.get("precision", "?"),
                                  " cuda-graph" if graph else "")


def stack_text(r):
    d = r["doc"]
    ranks = d.get("ranks", [])
    gpu = ranks[0].get("device", {}).get("name", "?") if ranks else "?"
    v = ranks[0].get("versions", {}) if ranks else {}
    if isinstance(v, list):
        v = {k["key"]: k["value"] for k in v}
    parts = ["%d x %s" % (d.get("world_size", 0), gpu), "%d node%s" % (d.get("nodes", 1), "" if d.get("nodes", 1) == 1 else "s"),
             d.get("comm", "?")]
    if v.get("nccl_runtime"):
        parts.append("NCCL " + v["nccl_runtime"])
    if v.get("cuda_runtime") and v.get("cuda_runtime") != "none":
        parts.append("CUDA " + v["cuda_runtime"])
    parts.append("ddpbench " + d.get("ddpbench_version", "?"))
    return ", ".join(parts)


def title(kind, rs):
    cfgs = sorted({config_text(r) for r in rs})
    stacks = sorted({stack_text(r) for r in rs})
    text = "%s: %s\n%s" % (kind, " | ".join(cfgs), " | ".join(stacks) if len(stacks) <= 2 else "%d stacks" % len(stacks))
    return wrap(text)


def wrap(text, width=90):
    """A title that fits a figure of 7.5 inches at 9 points: every line at most width characters."""
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) for line in text.split("\n"))


# ---- writing ------------------------------------------------------------------------------------------
def save(fig, out, name, sidecar):
    os.makedirs(out, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = os.path.join(out, "%s.%s" % (name, ext))
        tmp = p + ".tmp"
        fig.savefig(tmp, format=ext, dpi=130, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        os.replace(tmp, p)
        paths.append(p)
    p = os.path.join(out, "%s.data.json" % name)
    with open(p + ".tmp", "w") as f:
        json.dump(sidecar, f, indent=1, allow_nan=False, default=str)
    os.replace(p + ".tmp", p)
    plt.close(fig)
    print("plot.py: wrote %s (+ .svg, .data.json)" % paths[0])


def size_text(v, _=None):
    for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= n:
            return "%g %s" % (v / n, unit)
    return "%g B" % v


def num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


# ---- the plots ----------------------------------------------------------------------------------------
def plot_scaling(rs, out):
    series = []
    for r in rs:  # the sweep's own rows
        rows = []
        for g in records(r, "scaling", metric="gpus"):
            eff = next(records(r, "scaling", g["group"], "efficiency"), None)
            nodes = next(records(r, "scaling", g["group"], "nodes"), None)
            step = next(records(r, "scaling", g["group"], "step_ms"), None)
            if eff and num(eff["value"]) is not None:
                rows.append({"x": g["value"], "y": eff["value"] * 100, "y_scale": 100, "record": ident(eff),
                             "nodes": nodes["value"] if nodes else None, "step_ms": step["value"] if step else None,
                             "ranks": g["labels"].get("ranks"), "hosts": g["labels"].get("hosts")})
        if rows:
            series.append({"label": "%s (sweep)" % r["name"], "points": sorted(rows, key=lambda p: p["x"]), "kind": "sweep"})
    if not series:  # across runs of one config: the world ddp step at each size against the smallest size's
        by_cfg = {}
        for r in rs:
            tp = train_phase(r)
            st = next((x for x in records(r, tp, "world", "step_ms") if not x["labels"]), None)
            lo = next((x for x in records(r, "local", "world", "step_ms") if not x["labels"]), None)
            w = r["doc"]["world_size"]
            if st:
                by_cfg.setdefault(config_text(r), {})[w] = (r, st, "%s step at %d GPU%s" % (tp, w, "s" if w > 1 else ""))
            if lo and (w == 1 or not st):  # one GPU: training without communication is the 1-GPU step
                by_cfg.setdefault(config_text(r), {}).setdefault(1, (r, lo, "local step (no communication) as the 1-GPU step"))
        for cfg, runs in sorted(by_cfg.items()):
            if len(runs) < 2:
                continue
            sizes = sorted(runs)
            base = runs[sizes[0]][1]["value"]
            pts = [{"x": w, "y": base / runs[w][1]["value"] * 100, "record": ident(runs[w][1]), "file": runs[w][0]["path"],
                    "step_ms": runs[w][1]["value"], "base_step_ms": base, "what": runs[w][2],
                    "nodes": runs[w][0]["doc"].get("nodes", 1)} for w in sizes]
            local = pts[0]["record"]["measurement"] == "local"
            series.append({"label": "%s (%d runs%s)" % (cfg, len(pts), "; 1 GPU: local step" if local else ""),
                           "points": pts, "kind": "runs"})
    if not series:
        print("plot.py: scaling: no sweep records and no runs of one config at two sizes; skipped")
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    bounds = set()
    for s in series:
        xs, ys = [p["x"] for p in s["points"]], [p["y"] for p in s["points"]]
        last = s["points"][-1]
        ax.plot(xs, ys, "o-", label=s["label"] if len(series) == 1 else "%s: %.1f %% at %d GPUs" % (s["label"], last["y"], last["x"]))
        for p in (s["points"] if len(series) == 1 else []):  # values beside the points when they cannot overlap
            ax.annotate("%.1f%%\n%.2f ms" % (p["y"], p["step_ms"]) if p.get("step_ms") else "%.1f%%" % p["y"],
                        (p["x"], p["y"]), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7)
        prev = None
        for p in s["points"]:  # a node boundary: where the group first spans more nodes
            if prev is not None and p.get("nodes") and prev.get("nodes") and p["nodes"] > prev["nodes"]:
                bounds.add((prev["x"], p["x"]))
            prev = p
    for a, b in sorted(bounds):
        x = math.sqrt(a * b)
        ax.axvline(x, color="0.5", ls="--", lw=1)
        ax.text(x, 2, " more nodes ", rotation=90, va="bottom", ha="right", fontsize=7, color="0.4")
    ax.set_xscale("log", base=2)
    xs = sorted({p["x"] for s in series for p in s["points"]})
    ax.set_xticks(xs)
    ax.set_xticklabels([str(int(x)) for x in xs])
    ax.set_xlabel("GPUs (ranks in the group)")
    ax.set_ylabel("weak-scaling efficiency (%) vs the 1-GPU step")
    ax.set_ylim(0, max(110, max(p["y"] for s in series for p in s["points"]) * 1.15))
    ax.axhline(100, color="0.8", lw=0.8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    t = title("Scaling", rs)
    ax.set_title(t, fontsize=9)
    save(fig, out, "scaling", {"plot": "scaling", "title": t, "x": "GPUs", "y": "efficiency %", "series": series,
                               "node_boundaries": sorted(bounds)})


def stragglers(r, phase):
    """Ranks a straggler finding (warn or fail) names; a finding about another phase ("local: ...") is not this map's."""
    out = set()
    for f in r["doc"].get("findings", []):
        other = re.match(r"(local|comm|ddp): ", f.get("text", ""))
        if other and other.group(1) != phase:
            continue
        if f.get("check") in ("slowest_rank", "straggler") and f.get("severity") in ("warn", "fail"):
            m = re.search(r"rank (\d+)", f.get("subject", "") + " " + f.get("text", ""))
            if m:
                out.add(int(m.group(1)))
    return out


def train_phase(r):
    """The run's training phase: fsdp under --strategy fsdp, else ddp."""
    return "fsdp" if (r["doc"].get("config") or {}).get("strategy") == "fsdp" else "ddp"


def plot_heatmap(r, out, name):
    phase = meas = train_phase(r)
    recs = [x for x in records(r, phase, "world", "step_ms") if "rank" in x["labels"]]
    if not recs:  # a sweep without the world phases: its largest group
        groups = [g for g in records(r, "scaling", metric="gpus")]
        if groups:
            big = max(groups, key=lambda g: g["value"])["group"]
            recs = list(records(r, "scaling", big, "rank_step_ms"))
            meas = "scaling " + big
            phase = None
    if not recs:
        print("plot.py: heatmap %s: no per-rank step records; skipped" % r["name"])
        return
    ranks = {x["rank"]: x for x in r["doc"].get("ranks", [])}
    hosts = []
    for x in r["doc"].get("ranks", []):
        if x["host"] not in hosts:
            hosts.append(x["host"])
    cells = []
    for x in recs:
        rk = int(x["labels"]["rank"])
        info = ranks.get(rk, {})
        host = info.get("host", x["labels"].get("host", "?"))
        if host not in hosts:
            hosts.append(host)
        dev = info.get("device", {}) or {}
        gpu = dev.get("ordinal", -1)
        if gpu is None or gpu < 0:
            gpu = info.get("local_rank", 0)
        cells.append({"rank": rk, "host": host, "gpu": gpu, "y": x["value"], "record": ident(x)})
    ngpu = max(c["gpu"] for c in cells) + 1
    grid = [[float("nan")] * ngpu for _ in hosts]
    for c in cells:
        grid[hosts.index(c["host"])][c["gpu"]] = c["y"]
    slow = stragglers(r, phase)
    fig, ax = plt.subplots(figsize=(max(4.5, 1.0 * ngpu + 2.5), max(2.6, 0.55 * len(hosts) + 1.8)))
    # Colours centred on the median rank, at least +-2 %: a uniform cluster looks uniform, a slow rank red.
    ys = sorted(c["y"] for c in cells)
    med = ys[len(ys) // 2] if len(ys) % 2 else (ys[len(ys) // 2 - 1] + ys[len(ys) // 2]) / 2
    half = max(0.02, max(abs(y - med) for y in ys) / med)
    im = ax.imshow(grid, cmap="coolwarm", aspect="auto", vmin=med * (1 - half), vmax=med * (1 + half))
    cb = fig.colorbar(im, ax=ax)
    cb.set_label("median step time (ms)")
    for c in cells:
        i, j = hosts.index(c["host"]), c["gpu"]
        ax.text(j, i, "r%d\n%.3f" % (c["rank"], c["y"]), ha="center", va="center", fontsize=7,
                color="black")
        c["straggler"] = c["rank"] in slow
        if c["straggler"]:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=2.5))
    ax.set_xticks(range(ngpu))
    ax.set_xlabel("GPU (device ordinal on the host)")
    ax.set_yticks(range(len(hosts)))
    ax.set_yticklabels(hosts)
    ax.set_ylabel("host")
    t = title("%s: per-rank %s step time (ms)\ncolours: median rank +-%.0f %%%s" %
              (r["name"], meas, half * 100, ", stragglers outlined in red" if slow else ""), [r])
    ax.set_title(t, fontsize=9)
    save(fig, out, name, {"plot": "heatmap", "title": t, "file": r["path"], "hosts": hosts, "cells": cells,
                          "stragglers": sorted(slow)})


def plot_pairs(r, out, name):
    # the allreduce measurement over node pairs (ddpbench accept --json): group pair:<a>-<b> by node index,
    # busbw_gbs, labels bytes and hosts "<host a>,<host b>"
    recs = [x for x in r["doc"].get("records", []) if x["measurement"] == "allreduce"
            and x["group"].startswith("pair:") and x["metric"] == "busbw_gbs"]
    if not recs:
        print("plot.py: pairs %s: no node-pair busbw records; skipped" % r["name"])
        return
    node_host = {}
    for x in r["doc"].get("ranks", []):
        node_host.setdefault(x["node"], x["host"])
    for x in recs:  # the record's own hosts name its nodes where the ranks do not
        hosts = x["labels"].get("hosts", "").split(",")
        if len(hosts) == 2:
            for i, h in zip((int(v) for v in x["group"][5:].split("-")), hosts):
                node_host.setdefault(i, h)
    n = max(max(int(v) for v in x["group"][5:].split("-")) for x in recs) + 1
    n = max(n, len(node_host))
    best = {}
    for x in recs:  # a pair measured at several sizes: its largest message
        a, b = (int(v) for v in x["group"][5:].split("-"))
        size = float(x["labels"].get("bytes", 0))
        if num(x["value"]) is not None and ((a, b) not in best or size > best[(a, b)][0]):
            best[(a, b)] = (size, x)
    grid = [[float("nan")] * n for _ in range(n)]
    cells = []
    for (a, b), (_, x) in best.items():
        grid[a][b] = grid[b][a] = x["value"]
        cells.append({"a": a, "b": b, "y": x["value"], "record": ident(x)})
    names = [node_host.get(i, "node %d" % i) for i in range(n)]
    failed_hosts = [h for h in r["doc"].get("failed_hosts") or [] if h in names]
    marked = pair_findings(r)
    for c in cells:
        c["label"] = fig2(c["y"])
        c["severity"] = marked.get((c["a"], c["b"]), {}).get("severity")
    fig, ax = plt.subplots(figsize=(max(4.5, 0.7 * n + 2.5), max(3.8, 0.6 * n + 1.8)))
    vals = [c["y"] for c in cells]
    # pairs a hundred times apart (a broken link beside good ones): a log scale, so that both ends have a colour
    logc = min(vals) > 0 and max(vals) >= 10 * min(vals)
    im = ax.imshow(grid, cmap="magma", aspect="equal", norm=LogNorm() if logc else None)
    fig.colorbar(im, ax=ax).set_label("bus bandwidth (GB/s)%s" % (", log scale" if logc else ""))
    for c in cells:
        for i, j in ((c["a"], c["b"]), (c["b"], c["a"])):
            ax.text(j, i, c["label"], ha="center", va="center", fontsize=7,
                    color="white" if im.norm(c["y"]) < 0.5 else "black")
            if c["severity"]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2.5,
                                       ec="red" if c["severity"] == "fail" else "orange",
                                       ls="-" if c["severity"] == "fail" else "--"))
    for h in failed_hosts:  # a host on the drain list: FAIL in its (empty) diagonal cell, its name in red
        k = names.index(h)
        ax.add_patch(Rectangle((k - 0.5, k - 0.5), 1, 1, fc="#fbe3e1", ec="red", lw=2))
        ax.text(k, k, "FAIL", ha="center", va="center", fontsize=7, color="red", fontweight="bold")
    ax.set_xticks(range(n))
    ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_yticks(range(n))
    ax.set_yticklabels(names)
    for lab in ax.get_xticklabels() + ax.get_yticklabels():
        if lab.get_text() in failed_hosts:
            lab.set_color("red")
            lab.set_fontweight("bold")
    ax.set_xlabel("node (host)")
    ax.set_ylabel("node (host)")
    nbad = sum(1 for c in cells if c["severity"] == "fail")
    verdict = r["doc"].get("verdict")
    head = "%s%s: node-pair allreduce bus bandwidth (GB/s)" % (verdict + " " if verdict else "", r["name"])
    t = title(head, [r])
    if failed_hosts or marked:
        t += "\n" + wrap("%d of %d host%s fail%s; %s%s" % (
            len(failed_hosts), n, "" if n == 1 else "s", " (FAIL on the diagonal, names in red)" if failed_hosts else "",
            "%d failing pair%s outlined in red" % (nbad, "" if nbad == 1 else "s") if nbad else "no pair fails",
            ", warnings dashed orange" if any(c["severity"] == "warn" for c in cells) else ""))
    ax.set_title(t, fontsize=9)
    save(fig, out, name, {"plot": "pairs", "title": t, "file": r["path"], "nodes": names, "cells": cells,
                          "failed_hosts": failed_hosts, "colour_scale": "log" if logc else "linear"})


def fig2(v):
    """A figure with 2 significant digits at least, never in exponent form: 0.0012, 0.067, 2.4, 23, 187."""
    if v == 0 or abs(v) >= 10:
        return "%.0f" % v
    return ("%#.2g" % v).rstrip(".")


def pair_findings(r):
    """{(a, b): finding} for the pair checks that name a pair of nodes ("host<->host nodes a-b"), failing before
    warning."""
    out = {}
    for f in r["doc"].get("findings") or []:
        if not str(f.get("check", "")).startswith("pair_") or f.get("severity") not in ("fail", "warn"):
            continue
        m = re.search(r"nodes (\d+)-(\d+)", f.get("subject") or "")
        if m:
            key = tuple(sorted((int(m.group(1)), int(m.group(2)))))
            if key not in out or f["severity"] == "fail":
                out[key] = f
    return out


def run_state(doc):
    """A soak's state: the document's own "state" (running, interrupted, complete) where it has one, else its soak
    section's (running or complete: an interim document and an interrupted soak's last one both say running)."""
    st = doc.get("state")
    if st in ("running", "interrupted", "complete"):
        return st
    s = doc.get("soak")
    return s.get("state", "?") if isinstance(s, dict) else "?"


def plot_soak(r, out, name):
    """accept --soak's time series (its "soak" section): three panels over one time axis (each interval's end time,
    in minutes from 10 minutes on, else seconds): GEMM TFLOP/s and temperature per GPU (a line per GPU, named
    host/rank), busbw per link (node allreduce, node pairs: pairs run every --pair-every cycles, hence markers).
    A failing finding that says when (t_s) is a red vertical line on every panel, a warning an orange dashed one.
    Not measured (null) is a gap; a panel with nothing measured says so."""
    s = r["doc"].get("soak")
    if not isinstance(s, dict) or not s.get("intervals"):
        if isinstance(s, dict):
            print("plot.py: soak %s: no complete interval yet; skipped" % r["name"])
        return
    ends = [iv["t1_s"] for iv in s["intervals"]]
    minutes = max(ends) >= 600
    scale, unit = (60.0, "min") if minutes else (1.0, "s")
    xs = [t / scale for t in ends]

    def series(label, values, where):
        pts = []
        for i, v in enumerate(values[:len(xs)]):
            pts.append({"x": xs[i], "t_s": ends[i], "interval": s["intervals"][i]["interval"], "y": num(v),
                        "source": "%s[%d]" % (where, i)})
        return {"label": label, "points": pts}

    panels = [("tflops", "GEMM %s TFLOP/s" % s.get("gemm_precision", "?"), []),
              ("temperature_c", "temperature (C)", []), ("busbw_gbs", "allreduce busbw (GB/s)", [])]
    failed = set(r["doc"].get("failed_hosts") or [])
    for k, g in enumerate(s.get("gpus", [])):
        lab = "%s/r%s%s" % (g.get("host", "?"), g.get("rank", "?"), " FAIL" if g.get("host") in failed else "")
        for key, _, rows in panels[:2]:
            rows.append(series(lab, g.get(key, []), "soak.gpus[%d].%s" % (k, key)))
    for k, x in enumerate(s.get("links", [])):
        panels[2][2].append(series("%s %s" % (x.get("kind", "?"), x.get("name", "?")), x.get("busbw_gbs", []),
                                   "soak.links[%d].busbw_gbs" % k))
    marks = []
    for f in r["doc"].get("findings", []):
        if f.get("severity") in ("fail", "warn") and num(f.get("t_s")) is not None:
            marks.append({"t_s": f["t_s"], "x": f["t_s"] / scale, "interval": f.get("interval"),
                          "severity": f["severity"], "check": f.get("check"), "subject": f.get("subject")})
    marks.sort(key=lambda m: (m["t_s"], m["severity"] != "fail"))
    # failing findings that say no time (the first cycle's GEMM floors, --expect, --baseline, pairs: judged once)
    undated = [{"severity": f["severity"], "check": f.get("check"), "host": f.get("host"), "subject": f.get("subject")}
               for f in r["doc"].get("findings", []) if f.get("severity") in ("fail", "warn") and num(f.get("t_s")) is None]
    undated.sort(key=lambda f: (f["severity"] != "fail", str(f["check"]), str(f["host"])))
    state = run_state(r["doc"])
    fig, axes = plt.subplots(3, 1, figsize=(8.5, 8.0), sharex=True)
    for ax, (key, ylabel, rows) in zip(axes, panels):
        drawn = 0
        for row in rows:
            ys = [float("nan") if p["y"] is None else p["y"] for p in row["points"]]
            if all(math.isnan(y) for y in ys):
                continue
            bad = row["label"].endswith(" FAIL")  # a failing host's GPU: thicker, dashed, named so in the legend
            ax.plot([p["x"] for p in row["points"]], ys, "o-" if not bad else "o--", ms=3, lw=1.2 if not bad else 2.2,
                    label=row["label"])
            drawn += 1
        if not drawn:
            why = " (no link)" if key == "busbw_gbs" and not rows else " (the CPU device)" if r["doc"].get("device") == "cpu" else ""
            ax.text(0.5, 0.5, "not measured" + why,
                    transform=ax.transAxes, ha="center", va="center", fontsize=9, color="0.4")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        for m in marks:
            ax.axvline(m["x"], color="red" if m["severity"] == "fail" else "orange",
                       ls="-" if m["severity"] == "fail" else "--", lw=1, alpha=0.8)
        if drawn:  # the legend beside the axes, never on the data
            leg = ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                            title="GPU (host/rank)" if key != "busbw_gbs" else "link", title_fontsize=7)
            for txt in leg.get_texts():
                if txt.get_text().endswith(" FAIL"):
                    txt.set_color("red")
                    txt.set_fontweight("bold")
    axes[-1].set_xlabel("interval end (%s since the soak started)" % ("minutes" if minutes else "seconds"))
    axes[-1].set_xlim(0, max(xs) * 1.03)
    nf = sum(1 for m in marks if m["severity"] == "fail")
    nw = len(marks) - nf
    verdict = r["doc"].get("verdict")
    shown = {"running": "running when written: interrupted if the soak has ended",
             "interrupted": "interrupted"}.get(state, state)
    head = "%s%s: soak, %d interval%s of %g s (%s), GEMM %s" % (
        verdict + "  " if verdict else "", r["name"], len(xs), "" if len(xs) == 1 else "s", s.get("interval_s", 0),
        shown, s.get("gemm_precision", "?"))
    t = title(head, [r])
    if failed:
        t += "\n" + wrap("failing hosts (dashed, FAIL in the legend): %s" % ", ".join(sorted(failed)))
    if marks:
        t += "\nfindings when they happened: %d failing (red), %d warning (orange dashed)" % (nf, nw)
    if undated:
        def one(f):
            return "%s %s%s" % (f["severity"], f["check"], " (%s)" % f["host"] if f["host"] else "")
        nfu = sum(1 for f in undated if f["severity"] == "fail")
        t += "\n" + wrap("%d failing, %d warning finding%s with no time (not drawn): %s%s" % (
            nfu, len(undated) - nfu, "" if len(undated) == 1 else "s", ", ".join(one(f) for f in undated[:4]),
            ", ..." if len(undated) > 4 else ""))
    axes[0].set_title(t, fontsize=9, color="#b3261e" if verdict == "FAIL" else "black")
    save(fig, out, name, {"plot": "soak", "title": t, "file": r["path"], "state": state, "verdict": verdict,
                          "failed_hosts": sorted(failed), "undated": undated,
                          "x": "interval end (%s)" % unit, "x_scale_s": scale,
                          "panels": [{"metric": key, "y": ylabel, "series": rows} for key, ylabel, rows in panels],
                          "marks": marks})


def plot_busbw(rs, out):
    """One line per side and series: the runs of a side at each size are one point (their median), the runs' range
    an error bar. Colour by side, line style by series within the side, so that A and B never look alike."""
    groups = {}
    sides = []
    for r in rs:
        if r["side"] not in sides:
            sides.append(r["side"])
        for x in r["doc"].get("records", []):
            if x["metric"] not in ("busbw_gbs", "allreduce_busbw_gbs") or "bytes" not in x["labels"]:
                continue
            if num(x["value"]) is None or x["value"] <= 0:
                continue
            lab = {k: v for k, v in x["labels"].items() if k not in ("bytes", "count", "cycle")}
            key = (r["side"], config_text(r), x["measurement"], x["group"], tuple(sorted(lab.items())))
            pts = groups.setdefault(key, {})
            pts.setdefault(float(x["labels"]["bytes"]), []).append({"file": r["path"], "y": x["value"], "record": ident(x)})
    if not groups:
        print("plot.py: busbw: no busbw records by message size; skipped")
        return
    series = []
    ncfg = len({k[1] for k in groups})  # runs of one config on a side are one series; configs never mix
    for (side, cfg, m, g, lab), pts in sorted(groups.items(), key=lambda kv: (sides.index(kv[0][0]), kv[0][1:])):
        extra = ",".join("%s=%s" % kv for kv in lab if kv[0] in ("collective", "type", "placement"))
        rows = []
        for xv, runs in sorted(pts.items()):
            ys = sorted(v["y"] for v in runs)
            med = ys[len(ys) // 2] if len(ys) % 2 else (ys[len(ys) // 2 - 1] + ys[len(ys) // 2]) / 2
            rows.append({"x": xv, "y": med, "min": ys[0], "max": ys[-1], "record": runs[0]["record"], "runs": runs})
        nfiles = len({v["file"] for p in rows for v in p["runs"]})
        label = "%s%s%s %s%s%s" % (side + ": " if len(sides) > 1 else "", cfg + ", " if ncfg > 1 else "", m, g,
                                   " " + extra if extra else "", " (median of %d runs)" % nfiles if nfiles > 1 else "")
        series.append({"side": side, "config": cfg, "label": label, "points": rows})
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D", "v", "x"]
    within = {}
    cfgs = sorted({s["config"] for s in series})
    # every series measured at a size drawn side by side there (a few % apart on the log axis), so that lines,
    # points and runs' ranges never hide each other (accept's node pairs all run one size); the sidecar keeps the
    # true size (x) beside the drawn one (x_drawn)
    at = {}
    for k, s in enumerate(series):
        for p in s["points"]:
            at.setdefault(p["x"], []).append(k)
    for k, s in enumerate(series):  # A/B: a colour per side; one side: a colour per config
        ci = sides.index(s["side"]) if len(sides) > 1 else cfgs.index(s["config"])
        kk = within.get(ci, 0)
        within[ci] = kk + 1
        col = colours[ci % len(colours)] if len(sides) > 1 or len(cfgs) > 1 else colours[k % len(colours)]
        s["colour"] = col
        for p in s["points"]:
            m = len(at[p["x"]])
            step = min(0.06, 0.5 / m)  # all of a size's series within a third of an octave
            p["x_drawn"] = p["x"] * 2 ** (step * (at[p["x"]].index(k) - (m - 1) / 2))
        xs = [p["x_drawn"] for p in s["points"]]
        ax.plot(xs, [p["y"] for p in s["points"]], ls=styles[kk % len(styles)], marker=markers[kk % len(markers)], ms=4,
                color=col, label=s["label"])
        if any(p["max"] > p["min"] for p in s["points"]):  # the side's runs: their range at each size
            ax.errorbar(xs, [p["y"] for p in s["points"]], fmt="none", ecolor=col, elinewidth=1, capsize=3,
                        yerr=[[p["y"] - p["min"] for p in s["points"]], [p["max"] - p["y"] for p in s["points"]]])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(size_text))
    xs = sorted({p["x"] for s in series for p in s["points"]})
    if len(xs) == 1:  # one size: a factor of 2 either side, so that the series' offsets stay small
        ax.set_xlim(xs[0] / 2, xs[0] * 2)
    # a tick at every measured size (DDP's buckets are 3 MiB, 12 MiB: not powers of two); labelled where they fit
    # (12 sizes), else labels at powers of 2^k and the other sizes unlabelled ticks
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    if len(xs) > 12:
        every = max(1, math.ceil(math.log2(xs[-1] / xs[0]) / 8))
        ax.xaxis.set_major_locator(LogLocator(base=2 ** every))
        ax.xaxis.set_minor_locator(FixedLocator(xs))
        ax.xaxis.set_minor_formatter(NullFormatter())
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2, 5)))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(alpha=0.3, which="both")
    # the legend beside the axes, never on the data
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              title="side: series" if len(sides) > 1 else "series",
              title_fontsize=7)
    t = title("Bus bandwidth vs message size" + (" (%s)" % " vs ".join(sides) if len(sides) > 1 else ""), rs)
    ax.set_title(t, fontsize=9)
    lo, hi = ax.get_xlim()
    ticks = sorted(v for v in list(ax.xaxis.get_majorticklocs()) + list(ax.xaxis.get_minorticklocs()) if lo <= v <= hi)
    save(fig, out, "busbw", {"plot": "busbw", "title": t, "sides": sides, "series": series, "x_ticks": ticks})


def plot_compare(paths, out):
    for path in paths:
        c = read_json(path)
        if not isinstance(c, dict) or not isinstance(c.get("metrics"), list) or \
                not all(isinstance(m, dict) for m in c["metrics"]):
            die("%s: not `ddpbench compare --format json` output (no metrics)" % path)
        rows = [m for m in c["metrics"] if num(m.get("change_pct")) is not None]
        if not rows:
            print("plot.py: compare %s: no metric with a change; skipped" % path)
            continue
        fig, ax = plt.subplots(figsize=(7.5, max(2.5, 0.35 * len(rows) + 1.5)))
        pts = []
        for i, m in enumerate(rows):
            ci = m.get("ci_pct") or [None, None]
            y = len(rows) - 1 - i
            # compare's verdicts: '+' better, '-' worse (a regression when beyond the threshold), '~' no change
            col = {"+": "tab:green", "-": "darkred" if m.get("regression") else "tab:red"}.get(m.get("verdict"), "tab:gray")
            if ci[0] is not None:
                ax.errorbar(m["change_pct"], y, xerr=[[m["change_pct"] - ci[0]], [ci[1] - m["change_pct"]]], fmt="o",
                            color=col, capsize=3)
            else:
                ax.plot(m["change_pct"], y, "o", color=col)
            pts.append({"metric": m["name"], "unit": m.get("unit"), "y": m["change_pct"], "ci": ci, "verdict": m.get("verdict"),
                        "median_a": m.get("median_a"), "median_b": m.get("median_b")})
        ax.axvline(0, color="0.3", lw=0.8)
        # symmetric log beyond +-10 %: a change of 1 % and one of 10,000 % both readable; every value written
        ax.set_xscale("symlog", linthresh=10, linscale=1.5)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%+g" % v if v else "0"))
        for i, p in enumerate(pts):
            ax.annotate("%+.1f %%" % p["y"] if abs(p["y"]) < 1000 else "%+.0f %%" % p["y"], (p["y"], len(rows) - 1 - i),
                        textcoords="offset points", xytext=(0, 5), ha="center", fontsize=6)
        lo = min(min(p["y"], p["ci"][0] if p["ci"][0] is not None else p["y"]) for p in pts)
        hi = max(max(p["y"], p["ci"][1] if p["ci"][1] is not None else p["y"]) for p in pts)
        ax.set_xlim(min(-15, lo * 1.8 if lo < 0 else -15), max(15, hi * 1.8 if hi > 0 else 15))
        ax.set_ylim(-0.6, len(rows) - 0.2)  # room above the top row for its value
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([m["name"] for m in reversed(rows)], fontsize=7)
        ax.set_xlabel("change B vs A (%), with its confidence interval (symmetric log beyond +-10 %)")
        ax.set_ylabel("metric")
        ax.grid(alpha=0.3, axis="x")
        a, b = c.get("a", {}), c.get("b", {})
        t = wrap("A/B compare: %s (%s runs) vs %s (%s runs)\ngreen: better, red: worse (dark: beyond the threshold), "
                 "gray: no change told" % (a.get("label", "A"), a.get("runs", "?"), b.get("label", "B"), b.get("runs", "?")))
        ax.set_title(t, fontsize=9)
        name = "compare" if len(paths) == 1 else "compare-%s" % os.path.splitext(os.path.basename(path))[0]
        save(fig, out, name, {"plot": "compare", "title": t, "file": path, "xscale": ax.get_xscale(), "points": pts})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="*", help="ddpbench result JSON files")
    ap.add_argument("--out", default="plots", help="folder for the PNG, SVG and .data.json files (default: plots)")
    ap.add_argument("--compare", action="append", default=[], help="`ddpbench compare --format json` output")
    ap.add_argument("--ddpbench", help="the ddpbench binary (reads schema version 1 files)")
    a = ap.parse_args()
    if not a.results and not a.compare:
        die("no result files given (usage: launch/plot.py [--out DIR] [--compare FILE] RESULT.json ...)")
    rs = [load(p, a.ddpbench) for p in a.results]
    name_sides(rs)
    import_matplotlib()
    # shape_error checks what the plots read; a layout it missed is still one line naming the file, never a traceback
    what = ", ".join(a.results)
    try:
        if rs:
            plot_scaling(rs, a.out)
            for r in rs:
                what = r["path"]
                suffix = "" if len(rs) == 1 else "-" + r["name"]
                plot_heatmap(r, a.out, "heatmap" + suffix)
                plot_pairs(r, a.out, "pairs" + suffix)
                plot_soak(r, a.out, "soak" + suffix)
            what = ", ".join(a.results)
            plot_busbw(rs, a.out)
        what = ", ".join(a.compare)
        plot_compare(a.compare, a.out)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, ZeroDivisionError) as e:
        die("%s: a layout plot.py cannot read (%s: %s)" % (what, type(e).__name__, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
