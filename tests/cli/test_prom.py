#!/usr/bin/env python3
"""test_prom: --prom and `ddpbench export --prom` against the real tools from Debian.

  - `promtool check metrics` (package prometheus) accepts the file of a fresh 2-rank sweep run, of the
    version-2 fixture and of an H200 result (schema version 1) from results/;
  - every family has one HELP and one TYPE line, names start with ddpbench_, per-rank families carry the
    labels host, gpu, rank (and bus_id where the result has one), and the run's verdict, end time and
    per-GPU GEMM, step, efficiency and busbw families are there;
  - each value equals its JSON record in base units (ms -> s, GB/s -> B/s, TFLOP/s -> FLOP/s);
  - `prometheus-node-exporter --collector.textfile.directory DIR`, on 127.0.0.1 only, serves the samples when
    scraped (node_textfile_scrape_error 0), bounded by timeout and stopped by the test on every exit path, with an
    accept's file in the same folder: every series has its kind label, so none is "collected before", and both
    verdicts (ddpbench_run_ok{kind="run"} and {kind="accept"}) are served, and a soak's beside them
    ({kind="accept",mode="soak"}); no file has a NaN sample; the efficiency's noise is a series;
  - an existing --prom file is not overwritten without --force (exit 2, file unchanged);
  - `ddpbench accept --json` on 2 emulated nodes exported: per-host and node-pair busbw, per-GPU GEMM;
  - a --prom or --csv into a missing folder exits 2 before any work; export refuses a bad output before writing any.
argv: ddpbench mpiexec source_dir. Exit 77 when promtool or node_exporter is not installed.
Ends with "N passed, N failed".
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{family: {"help": n, "type": n}}, [(name, {labels}, value)]"""
    fam, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind, name = line.split()[1:3]
            fam.setdefault(name, {"HELP": 0, "TYPE": 0})[kind] += 1
            continue
        m = SAMPLE.match(line)
        if not m:
            check(False, "unparsed line %r" % line)
            continue
        labels = dict(LABEL.findall(m.group(3) or ""))
        samples.append((m.group(1), labels, float(m.group(4))))
    return fam, samples


def promtool_ok(path):
    with open(path) as f:
        p = subprocess.run(["promtool", "check", "metrics"], stdin=f, capture_output=True, text=True, timeout=60)
    if p.returncode:
        print(p.stdout, p.stderr, file=sys.stderr)
    return p.returncode == 0


def find(samples, name, **labels):
    return [v for n, l, v in samples if n == name and all(l.get(k) == x for k, x in labels.items())]


def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def main():
    if len(sys.argv) < 4:
        print("usage: test_prom.py DDPBENCH MPIEXEC SOURCE_DIR", file=sys.stderr)
        return 1
    prog, mpiexec, src = sys.argv[1:4]
    if not shutil.which("promtool") or not shutil.which("prometheus-node-exporter"):
        print("promtool or prometheus-node-exporter not installed (launch/test.sh installs them): skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="ddpbench-test-prom-")
    exporter = None
    try:
        # 1. a fresh run: 2 ranks, the sweep, JSON and textfile from the same run
        js, pf = os.path.join(tmp, "run.json"), os.path.join(tmp, "textfile", "ddpbench.prom")
        os.mkdir(os.path.dirname(pf))
        cmd = ["timeout", "300", mpiexec, "-np", "2", "--oversubscribe", prog, "--hidden", "64", "--layers", "3",
               "--batch", "16", "--steps", "6", "--warmup", "1", "--comm", "mpi", "--progress", "none", "--sweep",
               "--json", js, "--prom", pf]
        p = subprocess.run(cmd, capture_output=True, text=True)
        check(p.returncode == 0, "2-rank sweep run exits 0: %d %s" % (p.returncode, p.stderr[-2000:]))
        check(promtool_ok(pf), "promtool check metrics accepts the run's textfile")
        text = open(pf).read()
        fam, samples = parse(text)
        check(all(n.startswith("ddpbench_") for n in fam), "every family is ddpbench_*")
        check(all(v == {"HELP": 1, "TYPE": 1} for v in fam.values()), "one HELP and one TYPE per family")
        check(all(n in fam for n, _, _ in samples), "every sample belongs to a family with HELP/TYPE")
        keys = {(n, tuple(sorted(l.items()))) for n, l, _ in samples}
        check(len(keys) == len(samples), "no series repeated (node_exporter refuses a file that repeats one)")
        for name in ["ddpbench_run_ok", "ddpbench_run_end_time_seconds", "ddpbench_gemm_rank_flops_per_second",
                     "ddpbench_ddp_rank_step_seconds", "ddpbench_scaling_efficiency", "ddpbench_scaling_busbw_bytes_per_second",
                     "ddpbench_job_scaling_efficiency", "ddpbench_info"]:
            check(name in fam, "family %s present" % name)
        check(find(samples, "ddpbench_run_ok") == [1.0], "the verdict gauge is 1 for a passing run")
        end = find(samples, "ddpbench_run_end_time_seconds")
        check(len(end) == 1 and abs(end[0] - time.time()) < 600, "end time is now-ish: %s" % end)
        per_rank = [l for n, l, _ in samples if "rank" in l]
        check(per_rank and all("host" in l for l in per_rank), "per-rank samples carry host and rank")
        check(all("rank" in l for n, l, _ in samples if re.search(r"_rank_(step|compute)|_gemm_rank_", n)),
              "every sample of a per-rank family has its rank")
        gemm = [l for n, l, _ in samples if n == "ddpbench_gemm_rank_flops_per_second"]
        check(sorted(l["rank"] for l in gemm) == ["0", "1"], "one GEMM sample per rank")
        # values against the JSON records, in base units
        doc = json.load(open(js))
        scale = {"ms": 1e-3, "us": 1e-6, "GB/s": 1e9, "TFLOP/s": 1e12}
        n_cmp = 0
        for r in doc["records"]:
            if r["measurement"] == "scaling" and r["metric"] == "step_ms" and r["value"] is not None:
                got = find(samples, "ddpbench_scaling_step_seconds", group=r["group"])
                check(len(got) == 1 and close(got[0], r["value"] * 1e-3), "scaling %s step: %s vs %s ms" % (r["group"], got, r["value"]))
                n_cmp += 1
            if r["measurement"] == "gemm" and r["metric"] == "gemm_tflops":
                got = find(samples, "ddpbench_gemm_rank_flops_per_second", rank=r["labels"]["rank"])
                check(len(got) == 1 and close(got[0], r["value"] * scale[r["unit"]]), "gemm rank %s" % r["labels"]["rank"])
                n_cmp += 1
            if r["measurement"] == "scaling" and r["metric"] == "efficiency":
                got = find(samples, "ddpbench_scaling_efficiency", group=r["group"])
                check(len(got) == 1 and close(got[0], r["value"]), "efficiency %s" % r["group"])
                n_cmp += 1
            if r["measurement"] == "job" and r["metric"] == "scaling_efficiency_noise":
                got = find(samples, "ddpbench_job_scaling_efficiency_noise")
                check(got == ([] if r["value"] is None else [r["value"]]),
                      "the efficiency's noise is a series: %s vs %s" % (got, r["value"]))
                n_cmp += 1
        check(n_cmp >= 7, "compared %d values with the JSON" % n_cmp)

        # 2. saved results: the version-2 fixture and an H200 run (schema version 1, with bus ids)
        for i, res in enumerate([os.path.join(src, "tests/data/fixtures/result-v2.json"),
                                 os.path.join(src, "results/2026-11-29-h200x2-ef026ba/h200-8192x8x1024-bf16-ddpbench-2gpu.json")]):
            out = os.path.join(tmp, "saved%d.prom" % i)
            p = subprocess.run([prog, "export", res, "--prom", out], capture_output=True, text=True, timeout=60)
            check(p.returncode == 0, "export %s: %s" % (res, p.stderr))
            check(os.path.exists(out) and promtool_ok(out), "promtool accepts the export of %s" % os.path.basename(res))
            if i == 1 and os.path.exists(out):
                _, s = parse(open(out).read())
                g = [l for n, l, _ in s if n == "ddpbench_gemm_rank_flops_per_second"]
                check(len(g) == 2 and all(l.get("bus_id", "").startswith("0000:") and l.get("gpu") in ("0", "1") for l in g),
                      "H200 GEMM samples carry gpu and bus_id: %s" % g)

        # 3. not overwritten without --force
        before = open(pf).read()
        p = subprocess.run([prog, "export", js, "--prom", pf], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and open(pf).read() == before, "existing --prom file kept without --force (exit %d)" % p.returncode)
        check(len(p.stderr.strip().splitlines()) == 1 and pf in p.stderr, "one line naming the file: %r" % p.stderr)
        p = subprocess.run([prog, "export", js, "--prom", pf, "--force"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "--force overwrites")
        check(not [f for f in os.listdir(os.path.dirname(pf)) if f != "ddpbench.prom"], "no temporary file left beside it")

        # 3b. a --prom or --csv that cannot be written is refused before any work (preflight): exit 2, one line
        #     naming the file, no phase ran (nothing on stdout); export checks its outputs before reading too
        bad = os.path.join(tmp, "no-such-folder", "x")
        for opt in ("--prom", "--csv"):
            p = subprocess.run(["timeout", "120", mpiexec, "-np", "2", "--oversubscribe", prog, "--hidden", "64",
                                "--layers", "3", "--batch", "16", "--steps", "400", "--comm", "mpi", "--progress", "none",
                                opt, bad + opt[2:]], capture_output=True, text=True)
            check(p.returncode == 2 and bad + opt[2:] in p.stderr and p.stdout == "",
                  "%s into a missing folder: exit 2 before work (exit %d, %d bytes of output)\n%s"
                  % (opt, p.returncode, len(p.stdout), p.stderr[-600:]))
        csv_out = os.path.join(tmp, "export-bad.csv")
        p = subprocess.run([prog, "export", js, "--csv", csv_out, "--prom", bad + ".prom"], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 2 and "--prom" in p.stderr and not os.path.exists(csv_out),
              "export: a bad --prom is refused before any output is written (exit %d): %r" % (p.returncode, p.stderr))

        # 3c. an acceptance run's file (4 ranks as 2 emulated nodes of 2): per-GPU GEMM and per-host busbw with
        #     their host labels, the node pair, in base units (GB/s x 1e9)
        aj, ap = os.path.join(tmp, "accept.json"), os.path.join(tmp, "accept.prom")
        p = subprocess.run(["timeout", "240", mpiexec, "-np", "4", "--oversubscribe", "-x", "DDPBENCH_TEST_RANKS_PER_NODE=2",
                            "-x", "OPENBLAS_NUM_THREADS=1", prog, "accept", "--device", "cpu", "--relative-warn-pct", "99",
                            "--relative-fail-pct", "99", "--pair-mib", "1", "--node-mib", "1", "--json", aj],
                           capture_output=True, text=True)
        check(p.returncode == 0, "accept on 2 emulated nodes: exit %d %s" % (p.returncode, p.stderr[-1000:]))
        p = subprocess.run([prog, "export", aj, "--prom", ap], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and promtool_ok(ap), "export of accept's JSON: promtool accepts it (%s)" % p.stderr)
        if os.path.exists(ap) and os.path.exists(aj):
            recs = json.load(open(aj))["records"]
            _, s = parse(open(ap).read())
            for host in ("node00", "node01"):
                want = [x["value"] for x in recs if x["group"] == "node:" + host and x["metric"] == "busbw_gbs"]
                got = find(s, "ddpbench_allreduce_busbw_bytes_per_second", host=host, group="node:" + host, bytes="1048576")
                check(len(want) == 1 and len(got) == 1 and close(got[0], want[0] * 1e9),
                      "per-host busbw of %s = the record x 1e9: %s vs %s" % (host, got, want))
            pair = [x["value"] for x in recs if x["measurement"] == "allreduce" and x["group"] == "pair:0-1"]
            got = find(s, "ddpbench_allreduce_busbw_bytes_per_second", group="pair:0-1", hosts="node00,node01")
            check(len(pair) == 1 and len(got) == 1 and close(got[0], pair[0] * 1e9), "the node pair's busbw: %s" % got)
            g = find(s, "ddpbench_accept_rank_gemm_fp32_flops_per_second")
            check(len(g) == 4, "per-GPU GEMM for every rank: %d samples" % len(g))

        # 4. node_exporter serves it, beside an accept's file in the same folder (127.0.0.1 only; bounded; stopped
        #    below): every series carries its kind, so the two files never define the same series
        #    A soak's file beside them (the accept's result as a soak's: its config's soak above 0) carries
        #    mode="soak", so that it never collides with the one-shot accept's
        sp = os.path.join(tmp, "soak.prom")
        if os.path.exists(aj):
            sd = json.load(open(aj))
            check(sd.get("config", {}).get("soak") in ("0s", "0"), "a one-shot accept's config has soak 0: %r"
                  % sd.get("config", {}).get("soak"))
            sd["config"]["soak"] = "12s"
            json.dump(sd, open(os.path.join(tmp, "soak.json"), "w"))
            p = subprocess.run([prog, "export", os.path.join(tmp, "soak.json"), "--prom", sp], capture_output=True,
                               text=True, timeout=60)
            check(p.returncode == 0 and promtool_ok(sp), "export of a soak: promtool accepts it (%s)" % p.stderr)
        if os.path.exists(ap):
            shutil.copy(ap, os.path.join(os.path.dirname(pf), "accept.prom"))
        if os.path.exists(sp):
            shutil.copy(sp, os.path.join(os.path.dirname(pf), "soak.prom"))
            _, s_ = parse(open(sp).read())
            check(all(l.get("mode") == "soak" for _, l, _ in s_), "every sample of a soak's file has mode=\"soak\"")
        if os.path.exists(ap):
            _, s_ = parse(open(ap).read())
            check(not any("mode" in l for _, l, _ in s_), "a one-shot accept's samples have no mode label")
        for f in (pf, ap):
            if os.path.exists(f):
                _, s_ = parse(open(f).read())
                check(all(v == v for _, _, v in s_), "%s: no NaN sample (a figure not given is left out)" % os.path.basename(f))
                check(all("kind" in l for _, l, _ in s_), "%s: every sample has its kind label" % os.path.basename(f))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        exlog = open(os.path.join(tmp, "node_exporter.log"), "w+")
        exporter = subprocess.Popen(["timeout", "60", "prometheus-node-exporter", "--collector.disable-defaults",
                                     "--collector.textfile", "--collector.textfile.directory", os.path.dirname(pf),
                                     "--web.listen-address", "127.0.0.1:%d" % port],
                                    stdout=subprocess.DEVNULL, stderr=exlog, start_new_session=True)
        body = None
        for _ in range(100):
            try:
                body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
                break
            except OSError:
                if exporter.poll() is not None:
                    break
                time.sleep(0.2)
        check(body is not None, "node_exporter answered on 127.0.0.1:%d" % port)
        if body:
            _, scraped = parse("\n".join(l for l in body.splitlines() if not l.startswith("#")))
            check(find(scraped, "node_textfile_scrape_error") == [0.0], "node_textfile_scrape_error 0")
            mine = {(n, tuple(sorted(l.items()))): v for n, l, v in samples}
            # node_exporter gives every sample of a family all of the family's label names (empty where a file's
            # sample has none): to Prometheus an empty label is no label
            served = {(n, tuple(sorted((k, x) for k, x in l.items() if x))): v for n, l, v in scraped if n.startswith("ddpbench_")}
            _, now = parse(open(pf).read())
            _, acc = parse(open(ap).read()) if os.path.exists(ap) else (None, [])
            _, soak = parse(open(sp).read()) if os.path.exists(sp) else (None, [])
            acc = acc + soak
            mine = {(n, tuple(sorted(l.items()))): v for n, l, v in now + acc}
            same = all(k in served and (served[k] == v or (v != v and served[k] != served[k])) for k, v in mine.items())
            check(same and len(served) == len(mine) and len(now) + len(acc) == len(mine),
                  "node_exporter serves every sample of both files with its value (%d of %d; %d in the files; not served: %s)"
                  % (len(served), len(mine), len(now) + len(acc),
                     [(k, v, served.get(k)) for k, v in mine.items() if not (k in served and served[k] == v)][:3]))
            exlog.flush()
            exlog.seek(0)
            log = exlog.read()
            check("collected before" not in log, "node_exporter saw no series twice: %s" % log[-500:])
            ok = sorted((l.get("kind"), l.get("mode") or "", v) for n, l, v in scraped if n == "ddpbench_run_ok")
            check(ok == [("accept", "", 1.0), ("accept", "soak", 1.0), ("run", "", 1.0)],
                  "one verdict per kind and mode, all three served: %s" % ok)
        return 0
    finally:
        if exporter is not None:
            try:
                os.killpg(exporter.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                exporter.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(exporter.pid, signal.SIGKILL)
                exporter.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        pycheck.summary()  # the counts' line, on every exit path


if __name__ == "__main__":
    rc = main()
    sys.exit(rc if rc else (1 if pycheck.failed else 0))
