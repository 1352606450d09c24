#!/usr/bin/env python3
"""report.py: one self-contained HTML page of ddpbench results, to attach to a ticket.

usage: launch/report.py RESULT.json ... [--out report.html] [--ddpbench PATH] [--no-plots]

Each input is a result of `ddpbench` (a run, a sweep), `ddpbench accept`, `ddpbench collectives` (any schema
version) or `ddpbench compare --format json`. The page holds, in this order:
  - the bottom line of each input: its "bottom_line" and "verdict" when the file has them, else derived (the
    findings' worst severity; for a compare, the regressions beyond its threshold);
  - the findings grouped by host, the failing hosts first, then warning, then passing ones (passes are counted,
    not listed); a compare's metrics, regressions first;
  - for `ddpbench accept --soak` (a "soak" section, interim or complete): the soak's state, each host's verdict
    with its soak findings, and each GPU's steady state (first minute, equilibrium, peers, time to first throttle);
    its time series are among the plots;
  - the plots of launch/plot.py as inline SVG;
  - the provenance: kind, ddpbench version, the versions of rank 0, command line, start and end time, duration,
    labels, ranks and hosts;
  - the command that made the page.
Nothing in the page loads anything: no scripts, no style sheets, no images from elsewhere. Needs Python 3;
the plots need Matplotlib (Debian: python3-matplotlib): without it the page says so and has no plots.
Writes the page atomically (a temporary file renamed into place). Bad input: one line naming the file, exit 2.
"""
import argparse
import html
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SEVERITY_ORDER = {"fail": 0, "warn": 1, "info": 2, "pass": 3}
VERDICT_COLOUR = {"PASS": "#1b7f3b", "WARN": "#a86b00", "FAIL": "#b3261e", "ERROR": "#6b1a9e", "INCOMPLETE": "#555555"}


def die(msg):
    print("report.py: %s" % msg, file=sys.stderr)
    sys.exit(2)


def esc(v):
    return html.escape("" if v is None else str(v))


def shape_error(doc):
    """What in a document's layout the page cannot show ("key: what it must be"), or None: the keys the page reads,
    so that a hand-edited or foreign file is one line and exit 2, never a traceback or a wrong list (a string
    "failed_hosts" read letter by letter)."""
    def bad_list(v, kind):
        return not isinstance(v, list) or not all(isinstance(x, kind) for x in v)
    for key, kind, what in (("records", dict, "objects"), ("ranks", dict, "objects"), ("findings", dict, "objects"),
                            ("failed_hosts", str, "host names"), ("metrics", dict, "objects")):
        if doc.get(key) is not None and bad_list(doc[key], kind):
            return "%s: must be a list of %s" % (key, what)
    for i, f in enumerate(doc.get("findings") or []):
        for k in ("severity", "check", "subject", "text", "host", "unit"):
            if f.get(k) is not None and not isinstance(f[k], str):
                return "findings[%d].%s: must be a string" % (i, k)
    for i, m in enumerate(doc.get("metrics") or []):
        if not isinstance(m.get("name", ""), str) or not isinstance(m.get("ci_pct") or [None, None], list):
            return "metrics[%d]: name must be a string, ci_pct a list" % i
    for i, x in enumerate(doc.get("ranks") or []):
        if not isinstance(x.get("host", ""), str) or not isinstance(x.get("versions") or {}, (dict, list)):
            return "ranks[%d]: host must be a string, versions an object" % i
    for k in ("labels", "soak", "a", "b"):
        if doc.get(k) is not None and not isinstance(doc[k], dict):
            return "%s: must be an object" % k
    if isinstance(doc.get("labels"), dict) and not all(isinstance(v, str) for v in doc["labels"].values()):
        return "labels: must be an object of strings"
    for k in ("verdict", "bottom_line", "command_line", "kind"):
        if doc.get(k) is not None and not isinstance(doc[k], str):
            return "%s: must be a string" % k
    s = doc.get("soak") or {}
    for k in ("gpus", "links", "intervals"):
        if s.get(k) is not None and bad_list(s[k], dict):
            return "soak.%s: must be a list of objects" % k
    for i, g in enumerate(s.get("gpus") or []):
        if not isinstance(g.get("steady") or {}, dict) or not isinstance(g.get("temperature_c") or [], list):
            return "soak.gpus[%d]: steady must be an object, temperature_c a list" % i
    return None


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        die("%s: %s" % (path, e))
    except RecursionError:
        die("%s: nested too deep to be a ddpbench file" % path)
    if not isinstance(doc, dict) or ("schema_version" not in doc and "metrics" not in doc):
        die("%s: not a ddpbench result or compare output (no schema_version, no metrics)" % path)
    e = shape_error(doc)
    if e:
        die("%s: %s" % (path, e))
    return doc


def kind_of(doc):
    if "metrics" in doc and "schema_version" not in doc:
        return "compare"
    if any(r.get("measurement") == "scaling" for r in doc.get("records", []) if isinstance(r, dict)):
        return "sweep"
    return doc.get("kind") or "run"


def verdict_of(doc, kind):
    """(VERDICT, bottom line): the file's own when it has them, else derived from its findings or metrics."""
    v, line = doc.get("verdict"), doc.get("bottom_line")
    if v and line:
        return v, line
    if kind == "compare":
        reg = [m["name"] for m in doc.get("metrics", []) if m.get("regression")]
        v = v or ("FAIL" if reg else "PASS")
        a, b = doc.get("a", {}), doc.get("b", {})
        line = line or "ddpbench compare: %s  %s vs %s: %s" % (
            v, a.get("label", "A"), b.get("label", "B"),
            "%d regression%s beyond the threshold (%s)" % (len(reg), "" if len(reg) == 1 else "s", ", ".join(reg))
            if reg else "no regression beyond the threshold")
        return v, line
    fs = [f for f in doc.get("findings", []) if isinstance(f, dict)]
    nfail = sum(1 for f in fs if f.get("severity") == "fail")
    nwarn = sum(1 for f in fs if f.get("severity") == "warn")
    v = v or ("FAIL" if nfail else "WARN" if nwarn else "PASS")
    hosts = sorted({r.get("host") for r in doc.get("ranks", []) if isinstance(r, dict)})
    failed = doc.get("failed_hosts") or []
    what = "%d of %d host%s fail (%s)" % (len(failed), len(hosts), "" if len(hosts) == 1 else "s", ", ".join(failed)) \
        if failed else "%d host%s" % (len(hosts), "" if len(hosts) == 1 else "s")
    line = line or "ddpbench %s: %s  %s  (%s ranks; %d fail, %d warn; derived by report.py)" % (
        "run" if kind == "sweep" else kind, v, what, doc.get("world_size", "?"), nfail, nwarn)
    return v, line


def host_table(doc):
    """Findings by host: [(host, worst severity, [finding, ...])], failing hosts first, then warning, then the rest."""
    by = {}
    for r in doc.get("ranks", []):
        if isinstance(r, dict) and r.get("host"):
            by.setdefault(r["host"], [])
    for f in doc.get("findings", []):
        if isinstance(f, dict):
            by.setdefault(f.get("host") or "(job)", []).append(f)
    failed = set(doc.get("failed_hosts") or [])
    rows = []
    for h, fs in by.items():
        worst = min([SEVERITY_ORDER.get(f.get("severity"), 2) for f in fs] + [3])
        sev = "fail" if h in failed else [k for k, n in SEVERITY_ORDER.items() if n == worst][0]
        rows.append((h, sev, sorted(fs, key=lambda f: SEVERITY_ORDER.get(f.get("severity"), 2))))
    rows.sort(key=lambda r: (SEVERITY_ORDER.get(r[1], 2), r[0]))
    return rows


def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v
    return esc(v)


def section_findings(doc):
    out = ['<h3>Findings by host</h3>']
    rows = host_table(doc)
    if not rows:
        return "<h3>Findings by host</h3><p>none</p>"
    out.append('<table class="hosts"><tr><th>host</th><th>verdict</th><th>check</th><th>subject</th>'
               '<th>measured</th><th>expected</th><th>unit</th><th>text</th></tr>')
    for h, sev, fs in rows:
        shown = [f for f in fs if f.get("severity") in ("fail", "warn", "info")]
        span = max(1, len(shown))
        cls = "sev-%s" % sev
        first = True
        for f in shown or [None]:
            out.append('<tr class="%s" data-host="%s" data-severity="%s">' % (cls, esc(h), esc(sev)))
            if first:
                out.append('<td rowspan="%d" class="host">%s</td><td rowspan="%d" class="verdict">%s</td>' %
                           (span, esc(h), span, esc(sev.upper())))
                first = False
            if f is None:
                out.append('<td colspan="6">no finding</td>')
            else:
                out.append("<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>" % (
                    esc(f.get("severity", "") + " " + f.get("check", "")), esc(f.get("subject")), fmt(f.get("measured")),
                    fmt(f.get("expected")), esc(f.get("unit")), esc(f.get("text"))))
            out.append("</tr>")
    out.append("</table>")
    failed = doc.get("failed_hosts") or []
    out.append('<p>failing hosts: <span class="failed-hosts">%s</span></p>' %
               " ".join('<code class="failed-host">%s</code>' % esc(h) for h in failed) if failed else
               '<p>failing hosts: <span class="failed-hosts">none</span></p>')
    return "".join(out)


def soak_fig(v, digits=4):
    """A figure of the soak tables: 4 significant digits, an en dash when not measured (null)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return "%.*g" % (digits, v)
    return "&ndash;"


def section_soak(doc):
    """accept --soak: the state, each host's verdict with its soak findings, each GPU's steady state."""
    s = doc.get("soak")
    if not isinstance(s, dict):
        return ""
    state = s.get("state", "?")
    out = ['<div class="soak" data-state="%s"><h3>Soak (burn-in)</h3>' % esc(state)]
    n = s.get("intervals_complete")
    out.append('<p>%s: %s interval%s of %s s complete, %s s of --soak %s s; each cycle %s training steps, the GEMM in %s for '
               '%s s, node pairs every %s cycles</p>' % (
                   "complete" if state == "complete" else "<b>still running</b> when written (verdict INCOMPLETE: a soak "
                   "stopped by a signal or a dead rank ends with such a document)" if state == "running" else
                   "<b>ended early</b> (a rank failed or stopped: the watchdog's suspects: %s)" % esc(", ".join(
                       "rank %s (%s)" % (x.get("rank"), x.get("host")) for x in doc.get("suspects", [])
                       if isinstance(x, dict)) or "none named") if state == "interrupted" else esc(state),
                   esc(n), "" if n == 1 else "s", soak_fig(s.get("interval_s")), soak_fig(s.get("elapsed_s"), 3),
                   soak_fig(s.get("duration_s")), esc(s.get("train_steps")), esc(s.get("gemm_precision")),
                   soak_fig(s.get("gemm_seconds")), esc(s.get("pair_every"))))
    gpus = [g for g in s.get("gpus", []) if isinstance(g, dict)]
    soakf = [f for f in doc.get("findings", []) if isinstance(f, dict) and str(f.get("check", "")).startswith("soak")]
    verdicts = {h: "pass" if sev == "info" else sev for h, sev, _ in host_table(doc)}  # a host's verdict: pass, warn, fail
    hosts = []
    for g in gpus:
        if g.get("host") not in hosts:
            hosts.append(g.get("host"))
    hosts.sort(key=lambda h: (SEVERITY_ORDER.get(verdicts.get(h, "pass"), 2), str(h)))
    out.append('<table class="soak-hosts"><tr><th>host</th><th>verdict</th><th>GPUs</th><th>soak findings failing</th>'
               '<th>warning</th><th>first failing (interval, time)</th></tr>')
    for h in hosts:
        sev = verdicts.get(h, "pass")
        fs = [f for f in soakf if f.get("host") == h]
        nf = sum(1 for f in fs if f.get("severity") == "fail")
        nw = sum(1 for f in fs if f.get("severity") == "warn")
        first = min((f for f in fs if f.get("severity") == "fail" and isinstance(f.get("t_s"), (int, float))),
                    key=lambda f: f["t_s"], default=None)
        out.append('<tr class="sev-%s" data-soak-host="%s" data-verdict="%s"><td class="host">%s</td><td class="verdict">%s</td>'
                   '<td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>' % (
                       esc(sev), esc(h), esc(sev.upper()), esc(h), esc(sev.upper()),
                       sum(1 for g in gpus if g.get("host") == h), nf, nw,
                       "%s (interval %s, %s s)" % (esc(first.get("check")), esc(first.get("interval")), soak_fig(first["t_s"], 3))
                       if first else "&ndash;"))
    out.append("</table>")
    out.append('<table class="soak-steady"><tr><th>host</th><th>rank</th><th>GPU</th><th>model</th>'
               '<th>first minute TFLOP/s</th><th>equilibrium TFLOP/s</th><th>change %</th><th>peers TFLOP/s</th>'
               '<th>first throttle</th><th>max temperature C</th><th>steady state</th></tr>')
    for g in sorted(gpus, key=lambda g: (SEVERITY_ORDER.get(verdicts.get(g.get("host"), "pass"), 2), g.get("rank", 0))):
        y = g.get("steady") or {}
        temps = [v for v in g.get("temperature_c", []) if isinstance(v, (int, float))]
        steady = [f for f in soakf if f.get("check") == "soak_steady" and f.get("rank") == g.get("rank")]
        sev = min((f.get("severity") for f in steady), key=lambda v: SEVERITY_ORDER.get(v, 2), default=None)
        thr = "never" if y.get("first_throttle_s") is None else "%s s (interval %s)" % (
            soak_fig(y["first_throttle_s"], 3), esc(y.get("first_throttle_interval")))
        sink = y.get("sink")
        out.append('<tr class="sev-%s" data-soak-rank="%s"><td>%s</td><td>%s</td><td><code>%s</code></td><td>%s</td>'
                   '<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="verdict">%s</td></tr>' % (
                       esc(sev or "info"), esc(g.get("rank")), esc(g.get("host")), esc(g.get("rank")), esc(g.get("gpu") or "-"),
                       esc(g.get("model")), soak_fig(y.get("first_minute_tflops")), soak_fig(y.get("equilibrium_tflops")),
                       "%+.1f" % (100 * sink) if isinstance(sink, (int, float)) else "&ndash;",
                       soak_fig(y.get("peers_tflops")), thr, soak_fig(max(temps), 3) if temps else "&ndash;",
                       esc((sev or "").upper() or "-")))
    out.append("</table>")
    out.append("</div>")
    return "".join(out)


def section_compare(doc):
    ms = sorted(doc.get("metrics", []), key=lambda m: (not m.get("regression"), m.get("verdict") != "-", m.get("name", "")))
    out = ['<h3>Metrics (regressions first)</h3><table class="metrics"><tr><th>metric</th><th>unit</th><th>median A</th>'
           '<th>median B</th><th>change %</th><th>CI %</th><th>verdict</th></tr>']
    for m in ms:
        ci = m.get("ci_pct") or [None, None]
        cls = "sev-fail" if m.get("regression") else "sev-pass"
        out.append('<tr class="%s" data-metric="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
                   '<td>%s</td></tr>' % (cls, esc(m.get("name")), esc(m.get("name")), esc(m.get("unit")),
                                         fmt(m.get("median_a")), fmt(m.get("median_b")), fmt(m.get("change_pct")),
                                         "" if ci[0] is None else "%s .. %s" % (fmt(ci[0]), fmt(ci[1])),
                                         esc(("regression " if m.get("regression") else "") + str(m.get("verdict", "")))))
    out.append("</table>")
    return "".join(out)


def section_provenance(doc, path, kind):
    ranks = [r for r in doc.get("ranks", []) if isinstance(r, dict)]
    v = ranks[0].get("versions", {}) if ranks else {}
    if isinstance(v, list):
        v = {k.get("key"): k.get("value") for k in v}
    rows = [("file", path), ("kind", kind), ("ddpbench", doc.get("ddpbench_version")), ("schema version", doc.get("schema_version")),
            ("command line", doc.get("command_line")), ("start time", doc.get("start_time")), ("end time", doc.get("end_time")),
            ("duration (s)", "%.1f" % doc["duration_s"] if isinstance(doc.get("duration_s"), (int, float)) else None), ("exit code", doc.get("exit_code")),
            ("labels", ", ".join("%s=%s" % kv for kv in sorted((doc.get("labels") or {}).items())) or "none"),
            ("device", doc.get("device")), ("comm", doc.get("comm")), ("ranks", doc.get("world_size")),
            ("hosts", ", ".join(sorted({r.get("host", "?") for r in ranks})) or None)]
    if kind == "compare":
        for side in ("a", "b"):
            s = doc.get(side, {})
            rows.append(("side %s" % side.upper(), "%s: %s runs" % (s.get("label", side.upper()), s.get("runs", "?"))))
    vs = ", ".join("%s %s" % (k, val) for k, val in sorted(v.items()) if val not in ("", None))
    rows.append(("rank 0 versions", vs or None))
    out = ['<h3>Provenance</h3><table class="provenance">']
    for k, val in rows:
        if val is not None and val != "":
            out.append('<tr><th>%s</th><td><code>%s</code></td></tr>' % (esc(k), esc(val)))
    out.append("</table>")
    return "".join(out)


def svg_inline(path):
    """An SVG file's <svg> element, without the XML prolog and DOCTYPE (whose DTD address the page must not hold)."""
    text = open(path).read()
    i = text.find("<svg")
    return text[i:] if i >= 0 else ""


def plots_of(paths, compares, ddpbench, tmp):
    """Runs launch/plot.py on the inputs; returns ([(name, svg text)], note or None)."""
    py = None
    for cand in (sys.executable, "/usr/bin/python3"):
        if cand and os.path.exists(cand) and subprocess.run([cand, "-c", "import matplotlib"],
                                                            capture_output=True).returncode == 0:
            py = cand
            break
    if not py:
        return [], "no plots: Matplotlib is not installed for %s (Debian: python3-matplotlib for /usr/bin/python3)" % \
            " or ".join(sorted({sys.executable or "?", "/usr/bin/python3"}))
    cmd = [py, os.path.join(HERE, "plot.py"), "--out", tmp] + paths
    for c in compares:
        cmd += ["--compare", c]
    if ddpbench:
        cmd += ["--ddpbench", ddpbench]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=dict(os.environ, MPLBACKEND="Agg"))
    if p.returncode:
        return [], "no plots: plot.py failed: %s" % (p.stderr.strip().splitlines() or ["?"])[-1]
    names = sorted(f[:-4] for f in os.listdir(tmp) if f.endswith(".svg"))
    return [(n, svg_inline(os.path.join(tmp, n + ".svg"))) for n in names], None


def links_outside(page):
    """Whether an element of the page has a src or href to another place. Only attributes of tags count: text (a
    label src=//nfs/share/run1, a command line) is escaped, and an SVG comment is not an element. A plot's own
    image (Matplotlib's data:image/png) is inside the page."""
    tags = re.sub(r"<!--.*?-->", "", page, flags=re.S)
    return any(re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?!data:image/)(?:[a-z][a-z0-9+.-]*:|//)""", t, re.I)
               for t in re.findall(r"<[A-Za-z][^>]*>", tags))


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:1200px;color:#1d1d1f;
padding:0 1em}
h1{font-size:1.4em} h2{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em} h3{font-size:1em}
.bottom-file{display:block;font-size:.8em;color:#555;text-decoration:none}
.bottom{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:1.05em;padding:.6em .8em;border-left:6px solid;
background:#f6f6f6;white-space:pre-wrap;margin:.4em 0}
.verdict-PASS{border-color:#1b7f3b}.verdict-WARN{border-color:#a86b00}.verdict-FAIL{border-color:#b3261e}
.verdict-ERROR{border-color:#6b1a9e}.verdict-INCOMPLETE{border-color:#555}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0} th,td{border:1px solid #ddd;padding:.25em .5em;
text-align:left;vertical-align:top} th{background:#f0f0f0}
tr.sev-fail td.host,tr.sev-fail td.verdict{background:#fbe3e1;font-weight:bold;color:#b3261e}
tr.sev-warn td.host,tr.sev-warn td.verdict{background:#fff1d6;color:#7a4d00}
tr.sev-fail[data-metric]{background:#fbe3e1}
tr.sev-fail[data-soak-rank] td.verdict{background:#fbe3e1;color:#b3261e} tr.sev-warn[data-soak-rank] td.verdict{background:#fff1d6}
.plot{margin:1em 0} .plot svg{max-width:100%;height:auto}
code{font-family:ui-monospace,Menlo,Consolas,monospace}
.made{color:#555;font-size:.85em}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="ddpbench result JSON or `ddpbench compare --format json` output")
    ap.add_argument("--out", default="report.html", help="the HTML file to write (default report.html)")
    ap.add_argument("--ddpbench", help="the ddpbench binary (plot.py reads schema version 1 files through it)")
    ap.add_argument("--no-plots", action="store_true", help="leave the plots out")
    a = ap.parse_args()
    docs = [(p, load(p)) for p in a.inputs]
    kinds = [kind_of(d) for _, d in docs]
    made = " ".join(shlex.quote(x) for x in ["launch/report.py"] + sys.argv[1:])
    verdicts = [verdict_of(d, k) for (_, d), k in zip(docs, kinds)]
    # INCOMPLETE (a soak's interim document) is worse than a warning, not a failure; an unknown verdict is an error
    order = ["PASS", "WARN", "INCOMPLETE", "FAIL", "ERROR"]
    worst = max((v for v, _ in verdicts), key=lambda v: order.index(v) if v in order else len(order) - 1)

    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>ddpbench report: %s</title>'
             '<style>%s</style></head><body>' % (esc(worst), CSS)]
    parts.append('<h1>ddpbench report: <span id="verdict" style="color:%s">%s</span></h1>' %
                 (VERDICT_COLOUR.get(worst, "#000"), esc(worst)))
    parts.append('<section id="bottom-lines">')
    for i, ((p, _), (v, line)) in enumerate(zip(docs, verdicts)):  # each line under its file's name, a link to its section
        parts.append('<div class="bottom verdict-%s" data-file="%s" data-verdict="%s"><a class="bottom-file" '
                     'href="#result-%d">%s</a><span class="bottom-text">%s</span></div>' %
                     (esc(v), esc(p), esc(v), i, esc(p), esc(line)))
    parts.append("</section>")
    for i, ((p, d), k, (v, line)) in enumerate(zip(docs, kinds, verdicts)):
        parts.append('<section class="result" id="result-%d" data-file="%s" data-kind="%s"><h2>%s: %s (%s)</h2>' %
                     (i, esc(p), esc(k), esc(k), esc(os.path.basename(p)), esc(v)))
        # shape_error checks what the sections read; a layout it missed is still one line naming the file
        try:
            parts.append(section_compare(d) if k == "compare" else section_findings(d))
            if k != "compare":
                parts.append(section_soak(d))
            parts.append(section_provenance(d, p, k))
        except (TypeError, AttributeError, KeyError, ValueError, IndexError) as e:
            die("%s: a layout report.py cannot read (%s: %s)" % (p, type(e).__name__, e))
        parts.append("</section>")
    plots = []
    if not a.no_plots:
        results = [p for (p, _), k in zip(docs, kinds) if k != "compare"]
        compares = [p for (p, _), k in zip(docs, kinds) if k == "compare"]
        with tempfile.TemporaryDirectory() as tmp:
            plots, note = plots_of(results, compares, a.ddpbench, tmp)
        parts.append('<section id="plots"><h2>Plots</h2>')
        if note:
            parts.append('<p class="note">%s</p>' % esc(note))
        for n, svg in plots:
            parts.append('<figure class="plot" data-plot="%s">%s<figcaption>%s</figcaption></figure>' % (esc(n), svg, esc(n)))
        parts.append("</section>")
    parts.append('<p class="made">made by <code id="made-by">%s</code></p></body></html>\n' % esc(made))
    page = "".join(parts)
    if links_outside(page):
        die("internal: the page would link outside itself")
    out = os.path.abspath(a.out)
    fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=os.path.dirname(out))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(page)
            os.fchmod(f.fileno(), 0o644)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except OSError as e:
        os.unlink(tmp)
        die("%s: %s" % (a.out, e))
    print("report.py: wrote %s (%s; %d plot%s)" % (a.out, worst, len(plots), "" if len(plots) == 1 else "s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
