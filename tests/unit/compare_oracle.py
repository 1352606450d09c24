#!/usr/bin/python3
"""compare_oracle.py: the independent reference for src/cmd/compare/compare_stats.c, computed with scipy.stats (test-only; a
ddpbench run never needs Python). Reads one JSON object per line, {"x": [...], "y": [...], "alpha": a},
and writes one per line: {"u", "p", "exact", "ci": [lo, hi] or null when unbounded}.

The method follows ddpbench's policy (exact when neither sample has ties and both have <= 50 values,
otherwise the normal approximation with tie and continuity correction); the numbers are scipy's.
The confidence interval is found by inverting scipy's test: the shifts d for which
mannwhitneyu(x, y - d) gives p >= alpha, probed between consecutive pairwise differences y_j - x_i."""
import json
import sys

import numpy as np
from scipy import stats

EXACT_MAX = 50


def has_ties(v):
    return len(np.unique(v)) < len(v)


def method_for(x, y, pooled):
    ties = has_ties(np.concatenate([x, y])) if pooled else (has_ties(x) or has_ties(y))
    return "exact" if not ties and len(x) <= EXACT_MAX and len(y) <= EXACT_MAX else "asymptotic"


def p_shift(x, y, d, method):
    p = stats.mannwhitneyu(x, y - d, alternative="two-sided", method=method, use_continuity=True).pvalue
    return 1.0 if np.isnan(p) else p


def ci(x, y, alpha):
    diffs = np.unique(np.subtract.outer(y, x).ravel())
    # probe points: below all, between neighbours, above all
    probes = np.concatenate([[diffs[0] - 1.0], (diffs[:-1] + diffs[1:]) / 2, [diffs[-1] + 1.0]])
    method = method_for(x, y, pooled=False)
    ok = lambda i: p_shift(x, y, probes[i], method) >= alpha
    centre = int(np.searchsorted(probes, np.median(np.subtract.outer(y, x))))
    centre = min(max(centre, 0), len(probes) - 1)
    while not ok(centre):  # the Hodges-Lehmann estimate is accepted; step to an accepted probe next to it
        centre += 1 if centre + 1 < len(probes) and ok(centre + 1) else -1
    if ok(0) or ok(len(probes) - 1):
        return None
    lo, hi = 0, centre  # probes[lo] rejected, probes[hi] accepted
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    first = hi
    lo, hi = centre, len(probes) - 1  # probes[lo] accepted, probes[hi] rejected
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    last = lo
    # accepted probes first..last lie in (diffs[first-1], diffs[last]); the closed interval is its hull
    return [float(diffs[first - 1]), float(diffs[last])]


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        x, y = np.asarray(case["x"], float), np.asarray(case["y"], float)
        method = method_for(x, y, pooled=True)
        r = stats.mannwhitneyu(x, y, alternative="two-sided", method=method, use_continuity=True)
        p = 1.0 if np.isnan(r.pvalue) else float(r.pvalue)
        out = {"u": float(r.statistic), "p": p, "exact": method == "exact",
               "ci": ci(x, y, case.get("alpha", 0.05))}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
