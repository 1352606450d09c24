#!/usr/bin/env python3
"""test_large_results: compare and export --prom on a result of 131,072 records take linear time (a
linear search per record in compare and a duplicate scan per sample in the Prometheus writer made
64 k records take 21 s and 16 s). The records are a real run's first record repeated with a distinct label, in
two files (A and B, other start times). Bounds: export --prom and --csv and compare each within 20 s (the
quadratic code needed minutes for this size); and 131 k records within 6 x the time of 32 k (linear: 4 x).
The outputs are checked too: one Prometheus sample per record, compare lists the metrics.
argv: ddpbench mpiexec source_dir. Ends with "N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def timed(cmd, env):
    t = time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
    return r, time.monotonic() - t


def main():
    prog, src = sys.argv[1], sys.argv[3]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="ddpbench-large-") as tmp:
        base = os.path.join(tmp, "run.json")
        r = subprocess.run([prog, "--config", os.path.join(src, "configs/ci.ini"), "--device", "cpu", "--progress", "none",
                            "--json", base], env=env, capture_output=True, timeout=120)
        check(r.returncode == 0, "the base run: exit %d" % r.returncode)
        doc = json.load(open(base))
        rec = doc["records"][0]
        times = {}
        for n in (32768, 131072):
            files = []
            for side, start in (("a", "2026-12-02T01:00:00Z"), ("b", "2026-12-02T02:00:00Z")):
                d = dict(doc)
                d["start_time"] = start
                d["records"] = [dict(rec, labels=dict(rec.get("labels", {}), k="%d" % i)) for i in range(n)]
                f = os.path.join(tmp, "%s-%d.json" % (side, n))
                json.dump(d, open(f, "w"))
                files.append(f)
            prom, csv = os.path.join(tmp, "x-%d.prom" % n), os.path.join(tmp, "x-%d.csv" % n)
            r, te = timed([prog, "export", files[0], "--prom", prom, "--csv", csv, "--force"], env)
            check(r.returncode == 0, "export of %d records: exit %d %s" % (n, r.returncode, r.stderr[-300:]))
            samples = sum(1 for l in open(prom) if l.startswith("ddpbench_") and 'k="' in l)
            check(samples == n, "one sample per record: %d of %d" % (samples, n))
            r, tc = timed([prog, "compare", files[0], "--", files[1]], env)
            check(r.returncode in (0, 5), "compare of %d records a side: exit %d %s" % (n, r.returncode, r.stderr[-300:]))
            check(r.stdout.count(b"k=") >= n, "compare lists every metric (%d lines with k=)" % r.stdout.count(b"k="))
            times[n] = (te, tc)
            print("%d records: export %.2f s, compare %.2f s" % (n, te, tc))
        for k, what in ((0, "export"), (1, "compare")):
            small, big = times[32768][k], times[131072][k]
            check(big < 20, "%s of 131072 records within 20 s: %.1f s" % (what, big))
            check(big < 6 * max(small, 0.2), "%s: 4 x the records within 6 x the time: %.2f -> %.2f s" % (what, small, big))
    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main())
