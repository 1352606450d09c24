#!/usr/bin/env python3
"""test_html_report: launch/report.py's page, rendered by a real browser (headless Chromium), says what the JSON says.

Inputs made here on the CPU device: a 2-rank run (`ddpbench ... --json`), a failing accept on 2 emulated nodes
(DDPBENCH_TEST_RANKS_PER_NODE=1, a GEMM floor from --expect that no CPU meets: exit 4, both hosts to drain), and
the compare fixture (tests/data/fixtures/compare-ab.json, a regression of ddp step_ms). The page is rendered with
`chromium --headless --dump-dom`, and the DOM is checked against the JSON:
  - one bottom line per input, its verdict the file's own or derived (accept FAIL, run PASS, compare FAIL), and the
    page's verdict the worst of them;
  - the failing hosts listed equal the accept's "failed_hosts", and in the findings table they come first;
  - a compare's regression is its first metric row;
  - every plot launch/plot.py makes of the inputs is there as an inline <svg> (none when Matplotlib is absent);
  - the page loads nothing from elsewhere (no src or href to another place, no script);
  - the provenance holds the command line and the start time of each result; the page names the command that made it;
  - each bottom line names its file (a link to the file's section);
  - hand-edited inputs (wrong types, a string failed_hosts, deep nesting): one line naming the file and key, exit 2;
    a label src=//nfs/share/run1 is shown, not refused.
A second page, of two `ddpbench accept --soak` documents (the interim fixture tests/data/fixtures/accept-soak-running-v4.json,
and one made from the complete fixture with temperatures, a throttle and a failing Xid on rank 1 that fails its host),
is checked for the soak's blocks: its state, each host's verdict (failed_hosts first), a steady-state row per GPU whose
figures are the section's, the time series among the plots, and the page's verdict (INCOMPLETE is below FAIL).
A screenshot is written to report-screenshot.png in the working directory (the build folder under ctest), for a
person to look at. argv: ddpbench mpiexec source_dir. Exit 77 when chromium is absent. Ends with "N passed, N failed".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


class Dom(HTMLParser):
    """The rendered DOM as a list of (tag, attrs, text inside the element up to its first child)."""

    def __init__(self):
        super().__init__()
        self.els, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": "", "parents": [e["tag"] + "." + e["attrs"].get("class", "")
                                                                         for e in self.stack]}
        self.els.append(el)
        if tag not in ("meta", "br", "img", "input", "link", "hr", "col"):
            self.stack.append(el)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for el in self.stack:
            el["text"] += data

    def find(self, tag=None, cls=None, **attrs):
        out = []
        for e in self.els:
            if tag and e["tag"] != tag:
                continue
            if cls and cls not in e["attrs"].get("class", "").split():
                continue
            if any(e["attrs"].get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(e)
        return out


def browser():
    for b in ("chromium", "chromium-browser"):
        if shutil.which(b):
            return shutil.which(b)
    return None


def has_matplotlib():
    return any(subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode == 0
               for py in (sys.executable, "/usr/bin/python3") if py and os.path.exists(py))


def main():
    if len(sys.argv) < 4:
        print("usage: test_html_report.py DDPBENCH MPIEXEC SOURCE_DIR", file=sys.stderr)
        return 1
    prog, mpiexec, src = sys.argv[1:4]
    chrome = browser()
    if not chrome:
        print("chromium not installed (launch/test.sh installs it, test-only): skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="ddpbench-test-report-")
    try:
        run = os.path.join(tmp, "run.json")
        p = subprocess.run(["timeout", "120", mpiexec, "-np", "2", "--oversubscribe", prog, "--hidden", "64", "--layers", "3",
                            "--batch", "16", "--steps", "6", "--warmup", "1", "--comm", "mpi", "--quiet", "--json", run],
                           capture_output=True, text=True)
        check(p.returncode == 0, "run: exit %d %s" % (p.returncode, p.stderr[-1500:]))
        high = os.path.join(tmp, "high.ini")
        open(high, "w").write("; no CPU does this\ngemm_fp32_tflops = 1000\n")
        acc = os.path.join(tmp, "accept.json")
        p = subprocess.run(["timeout", "120", mpiexec, "-np", "2", "--oversubscribe", "-x", "DDPBENCH_TEST_RANKS_PER_NODE=1",
                            "-x", "OPENBLAS_NUM_THREADS=1", prog, "accept", "--device", "cpu", "--expect", high,
                            "--pair-mib", "1", "--node-mib", "1", "--json", acc], capture_output=True, text=True)
        check(p.returncode == 4 and os.path.exists(acc), "failing accept: exit %d (want 4) %s" % (p.returncode, p.stderr[-800:]))
        cmp_ = os.path.join(src, "tests/data/fixtures/compare-ab.json")
        if not (os.path.exists(run) and os.path.exists(acc)):
            return 1
        docs = {f: json.load(open(f)) for f in (acc, run, cmp_)}
        check(docs[acc]["failed_hosts"] == ["node00", "node01"], "the accept fails both emulated hosts: %s" %
              docs[acc]["failed_hosts"])

        html = os.path.join(tmp, "report.html")
        p = subprocess.run([sys.executable, os.path.join(src, "launch/report.py"), acc, run, cmp_, "--ddpbench", prog,
                            "--out", html], capture_output=True, text=True, timeout=300)
        check(p.returncode == 0 and os.path.exists(html), "report.py: exit %d %s" % (p.returncode, p.stderr[-1500:]))
        if not os.path.exists(html):
            return 1
        page = open(html).read()
        check(not re.search(r"""<(?:script|link|img|iframe)\b""", page), "no script, link, img or iframe element")
        check(not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//|file:)""", page), "no src or href to another place")

        # the browser's DOM
        prof = os.path.join(tmp, "profile")
        base = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + prof, "--no-first-run"]
        dump = subprocess.run(base + ["--dump-dom", "file://" + html], capture_output=True, text=True, timeout=120)
        check(dump.returncode == 0 and "<body" in dump.stdout, "chromium --dump-dom: exit %d %s" %
              (dump.returncode, dump.stderr[-500:]))
        dom = Dom()
        dom.feed(dump.stdout)

        bottoms = dom.find("div", cls="bottom")
        check([b["attrs"].get("data-file") for b in bottoms] == [acc, run, cmp_], "a bottom line per input, in order")
        want = {acc: "FAIL", run: "PASS", cmp_: "FAIL"}
        names = dom.find("a", cls="bottom-file")
        lines = dom.find("span", cls="bottom-text")
        check([n["text"] for n in names] == [acc, run, cmp_] and
              [n["attrs"].get("href") for n in names] == ["#result-0", "#result-1", "#result-2"],
              "each bottom line names its file, a link to its section: %s" % [n["text"] for n in names])
        check(len(lines) == len(bottoms), "each bottom line's text in its own element")
        for b, t in zip(bottoms, lines):
            f = b["attrs"].get("data-file")
            d = docs.get(f, {})
            v = d.get("verdict") or want.get(f)
            check(b["attrs"].get("data-verdict") == v, "%s: verdict %s (want %s)" % (f, b["attrs"].get("data-verdict"), v))
            if d.get("bottom_line"):
                check(t["text"].strip() == d["bottom_line"], "%s: the file's own bottom line" % f)
            else:
                check(t["text"].startswith("ddpbench ") and (": %s" % v) in t["text"], "%s: a derived bottom line: %r" %
                      (f, t["text"]))
        top = dom.find(id="verdict")
        check(top and top[0]["text"] == "FAIL", "the page's verdict is the worst: %s" % (top and top[0]["text"]))

        # the accept's section: failing hosts listed = failed_hosts, and first in the table
        sec = [e for e in dom.find("section", cls="result") if e["attrs"].get("data-file") == acc]
        check(len(sec) == 1 and sec[0]["attrs"].get("data-kind") == "accept", "the accept's section")
        listed = [e["text"] for e in dom.find("code", cls="failed-host")]
        check(listed == docs[acc]["failed_hosts"], "failing hosts listed = the JSON's failed_hosts: %s" % listed)
        rows = [e for e in dom.find("tr") if e["attrs"].get("data-host")]
        acc_rows = [r for r in rows if r["attrs"].get("data-host") in {x["host"] for x in docs[acc]["ranks"]} | {"(job)"}]
        order = []
        for r in acc_rows:
            if r["attrs"]["data-host"] not in order:
                order.append(r["attrs"]["data-host"])
        nf = len(docs[acc]["failed_hosts"])
        check(sorted(order[:nf]) == sorted(docs[acc]["failed_hosts"]) and
              all(r["attrs"]["data-severity"] == "fail" for r in acc_rows if r["attrs"]["data-host"] in order[:nf]),
              "the failing hosts come first in the findings: %s" % order)
        fails = [f for f in docs[acc]["findings"] if f["severity"] == "fail"]
        shown = [e for e in dom.find("td") if e["text"].startswith("fail gemm_fp32")]
        check(len(shown) == len(fails), "every failing finding shown (%d of %d)" % (len(shown), len(fails)))

        # the compare's section: the regression first
        mrows = [e for e in dom.find("tr") if e["attrs"].get("data-metric")]
        regs = [m["name"] for m in docs[cmp_]["metrics"] if m.get("regression")]
        check(len(mrows) == len(docs[cmp_]["metrics"]) and [m["attrs"]["data-metric"] for m in mrows[:len(regs)]] == regs,
              "a row per metric, the regressions first: %s" % [m["attrs"]["data-metric"] for m in mrows[:3]])

        # plots: as many inline svg as plot.py makes of these inputs, one per figure
        figs = dom.find("figure", cls="plot")
        if has_matplotlib():
            py = next(x for x in (sys.executable, "/usr/bin/python3") if subprocess.run(
                [x, "-c", "import matplotlib"], capture_output=True).returncode == 0)
            po = os.path.join(tmp, "plots")
            subprocess.run([py, os.path.join(src, "launch/plot.py"), "--out", po, acc, run, "--compare", cmp_, "--ddpbench", prog],
                           capture_output=True, text=True, timeout=300)
            made = sorted(f[:-4] for f in os.listdir(po) if f.endswith(".svg"))
            check(len(made) >= 3, "plot.py makes plots of these inputs: %s" % made)
            check(sorted(f["attrs"].get("data-plot") for f in figs) == made, "every plot in the page: %s" %
                  [f["attrs"].get("data-plot") for f in figs])
            svgs = [e for e in dom.find("svg") if any(x.startswith("figure.plot") for x in e["parents"])]
            check(len(svgs) == len(made), "each plot an inline svg element: %d of %d" % (len(svgs), len(made)))
        else:
            check(not figs and "Matplotlib is not installed" in dump.stdout, "no Matplotlib: no plots, and the page says so")

        # provenance and the maker
        text = dump.stdout
        for f in (acc, run):
            check(html_has(text, docs[f]["command_line"]) and docs[f]["start_time"] in text,
                  "%s: its command line and start time in the provenance" % os.path.basename(f))
        made_by = dom.find(id="made-by")
        check(made_by and made_by[0]["text"].startswith("launch/report.py ") and "--out" in made_by[0]["text"],
              "the page names the command that made it")

        # a screenshot for a person to look at
        shot = os.path.abspath("report-screenshot.png")
        p = subprocess.run(base + ["--screenshot=" + shot, "--window-size=1280,2400", "file://" + html],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and os.path.exists(shot) and open(shot, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
              "a screenshot: %s" % shot)
        print("test_html_report: screenshot for a person: %s" % shot)

        soak_page(chrome, base, src, tmp)

        # bad input: one line naming the file, exit 2
        bad = os.path.join(tmp, "bad.json")
        open(bad, "w").write("[1]")
        p = subprocess.run([sys.executable, os.path.join(src, "launch/report.py"), bad, "--out", os.path.join(tmp, "x.html")],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and bad in p.stderr and len(p.stderr.strip().splitlines()) == 1 and
              not os.path.exists(os.path.join(tmp, "x.html")), "not a result: exit 2, one line, no page")
        hostile_inputs(src, tmp)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        pycheck.summary()


def hostile_inputs(src, tmp):
    """Hand-edited or foreign files: one line naming the file and the key, exit 2, no page, never a traceback (a
    string "failed_hosts" once listed its letters as six failing hosts); a valid label that looks like an address
    (src=//nfs/share/run1, accepted by ddpbench) is text on the page, not a refusal."""
    base = json.load(open(os.path.join(src, "tests/data/fixtures/accept-soak-v4.json")))
    cases = {"deep": (None, "nested too deep"), "ranks_number": (dict(base, ranks=5), "ranks"),
             "severity_number": (dict(base, findings=[dict(f, severity=3) for f in base["findings"]]), "severity"),
             "failed_hosts_string": (dict(base, failed_hosts="node01"), "failed_hosts"),
             "findings_dict": (dict(base, findings={"a": 1}), "findings"), "soak_string": (dict(base, soak="x"), "soak"),
             "labels_number": (dict(base, labels={"side": 3}), "labels"), "verdict_list": (dict(base, verdict=["FAIL"]), "verdict")}
    for name, (doc, key) in cases.items():
        f = os.path.join(tmp, "hostile-%s.json" % name)
        with open(f, "w") as fh:
            fh.write('{"schema_version": 4, "x": %s1%s}' % ("[" * 5000, "]" * 5000) if doc is None else json.dumps(doc))
        out = os.path.join(tmp, "hostile-%s.html" % name)
        p = subprocess.run([sys.executable, os.path.join(src, "launch/report.py"), f, "--out", out, "--no-plots"],
                           capture_output=True, text=True, timeout=60)
        err = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(err) == 1 and f in err[0] and key in err[0] and not os.path.exists(out),
              "%s: exit 2, one line naming the file and %r, no page: %d %r" % (name, key, p.returncode, err[-1:]))
    f = os.path.join(tmp, "label-src.json")
    json.dump(dict(base, labels={"src": "//nfs/share/run1"}, command_line="accept --label src=//nfs/share/run1"),
              open(f, "w"))
    out = os.path.join(tmp, "label-src.html")
    p = subprocess.run([sys.executable, os.path.join(src, "launch/report.py"), f, "--out", out, "--no-plots"],
                       capture_output=True, text=True, timeout=60)
    page = open(out).read() if os.path.exists(out) else ""
    check(p.returncode == 0 and "src=//nfs/share/run1" in page, "a label src=//nfs/share/run1: the page shows it: %d %s" %
          (p.returncode, p.stderr.strip()))
    check(not re.search(r"""<[^>]*\b(?:src|href)\s*=\s*["']?//""", page), "and no element links outside")


def soak_page(chrome, base, src, tmp):
    """The soak's blocks in a page of two soak documents: an interim one and a complete one that fails a host."""
    fxd = os.path.join(src, "tests/data/fixtures")
    run_doc = os.path.join(fxd, "accept-soak-running-v4.json")
    d = json.load(open(os.path.join(fxd, "accept-soak-v4.json")))
    s = d["soak"]
    n = s["intervals_complete"]
    for k, g in enumerate(s["gpus"]):
        g["temperature_c"] = [61.0 + i + k for i in range(n)]
    g1 = s["gpus"][1]
    g1["steady"].update(first_throttle_s=7.25, first_throttle_interval=3)
    g1["xids"] = [{"xid": 79, "t_s": 8.5, "interval": 3}]
    d["findings"].append({"check": "soak_xid", "severity": "fail", "scope": "gpu", "subject": "GPU1  (vm, rank 1)",
                          "host": "vm", "rank": 1, "measured": 79, "expected": None, "unit": "", "interval": 3, "t_s": 8.5,
                          "text": "Xid 79 (fell off the bus) in interval 3"})
    d.update(verdict="FAIL", exit_code=4, failed_hosts=["vm"], bottom_line="ddpbench accept: FAIL  0 of 1 host pass")
    gpu = os.path.join(tmp, "soak-gpu.json")
    json.dump(d, open(gpu, "w"))
    html = os.path.join(tmp, "soak.html")
    p = subprocess.run([sys.executable, os.path.join(src, "launch/report.py"), run_doc, gpu, "--out", html],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0 and os.path.exists(html), "report.py of two soaks: exit %d %s" % (p.returncode, p.stderr[-1500:]))
    if not os.path.exists(html):
        return
    dump = subprocess.run(base + ["--dump-dom", "file://" + html], capture_output=True, text=True, timeout=120)
    check(dump.returncode == 0 and "<body" in dump.stdout, "chromium --dump-dom of the soak page")
    dom = Dom()
    dom.feed(dump.stdout)
    top = dom.find(id="verdict")
    check(top and top[0]["text"] == "FAIL", "soak page: FAIL is worse than INCOMPLETE: %s" % (top and top[0]["text"]))
    blocks = dom.find("div", cls="soak")
    check([b["attrs"].get("data-state") for b in blocks] == ["running", "complete"], "a soak block per soak, its state")
    check(blocks and "still running" in blocks[0]["text"] and "1 interval of 3 s complete" in blocks[0]["text"],
          "the interim soak says it was still running: %r" % (blocks and blocks[0]["text"][:200]))
    hosts = [e for e in dom.find("tr") if e["attrs"].get("data-soak-host")]
    check([(h["attrs"]["data-soak-host"], h["attrs"]["data-verdict"]) for h in hosts] == [("vm", "PASS"), ("vm", "FAIL")],
          "each soak's host verdict (the failing soak's host fails): %s" % [(h["attrs"]["data-soak-host"], h["attrs"][
              "data-verdict"]) for h in hosts])
    check(len(hosts) == 2 and "soak_xid (interval 3, 8.5 s)" in hosts[1]["text"], "the host's first failing soak finding")
    rows = [e for e in dom.find("tr") if e["attrs"].get("data-soak-rank")]
    check(len(rows) == 4, "a steady-state row per GPU of each soak: %d" % len(rows))
    docs = [json.load(open(run_doc)), d]
    for i, r in enumerate(rows):
        doc = docs[i // 2]
        g = next(x for x in doc["soak"]["gpus"] if str(x["rank"]) == r["attrs"]["data-soak-rank"])
        y = g["steady"]
        cells = [c["text"] for c in dom.els[dom.els.index(r) + 1:] if c["tag"] == "td"][:11]
        want = [g["host"], str(g["rank"])] + ["%.4g" % y[k] for k in ("first_minute_tflops", "equilibrium_tflops")]
        check(cells[0:2] + cells[4:6] == want and cells[7] == "%.4g" % y["peers_tflops"] and
              cells[6] == "%+.1f" % (100 * y["sink"]), "soak %d rank %s: the steady figures: %s" % (i // 2, g["rank"], cells))
        thr = "never" if y["first_throttle_s"] is None else "7.25 s (interval 3)"
        temps = [v for v in g["temperature_c"] if v is not None]
        check(cells[8] == thr and cells[9] == ("%.3g" % max(temps) if temps else "\u2013"),
              "soak %d rank %s: first throttle %r, max temperature %r" % (i // 2, g["rank"], cells[8], cells[9]))
    if has_matplotlib():
        figs = sorted(f["attrs"].get("data-plot") for f in dom.find("figure", cls="plot"))
        check({"soak-accept-soak-running-v4", "soak-soak-gpu"} <= set(figs), "the soaks' time series among the plots: %s" % figs)


def html_has(text, s):
    import html as h
    return h.escape(s) in text or s in text


if __name__ == "__main__":
    rc = main()
    sys.exit(rc if rc else (1 if pycheck.failed else 0))
