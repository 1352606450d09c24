#!/usr/bin/env python3
"""cycles.py: no two files of ddpbench need each other, from the symbols the objects define and use.

argv: the layers' static libraries (libddpbench_<layer>.a). For every object, `nm` gives the symbols it defines
(T, D, B, R, C) and uses (U); file A points at file B when A uses a symbol B defines. A strongly connected
component of more than one file is a cycle: the files cannot be understood, tested or moved one at a time.
mpi_where.o is left out: it defines the PMPI wrappers (MPI_Send, ...), so every MPI caller points at it.
Also checks that the test can fail: a made-up graph with a cycle must be reported.
Ends with "N passed, N failed"."""
import collections
import os
import subprocess
import sys

sys.setrecursionlimit(100000)


def graph(archives):
    defs, uses = {}, collections.defaultdict(set)
    for a in archives:
        layer = os.path.basename(a)[len("libddpbench_"):-2]
        out = subprocess.run(["nm", "-A", a], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            where, _, rest = line.rpartition(": ") if ": " in line else (line, "", "")
            obj = where.split(":")[-1]
            if not obj.endswith(".o") or obj.startswith("mpi_where."):
                continue
            f = layer + "/" + obj[:-2].replace(".c", "").replace(".cu", "")
            p = rest.split()
            if len(p) == 3 and p[1] in "TDBRC":
                defs.setdefault(p[2], f)
            elif len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
            else:
                uses.setdefault(f, set())
    return {f: {defs[s] for s in us if s in defs and defs[s] != f} for f, us in uses.items()}


def cycles(edges):
    idx, low, st, on, out, c = {}, {}, [], set(), [], [0]

    def scc(v):
        idx[v] = low[v] = c[0]
        c[0] += 1
        st.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in idx:
                scc(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
        if v not in idx:
            scc(v)
    return out


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


check(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]], "a made-up cycle is found")
check(cycles({"a": {"b"}, "b": {"c"}, "d": {"a"}}) == [], "a made-up chain is no cycle")
edges = graph(sys.argv[1:])
check(len(edges) > 50, "the libraries hold the project's objects (%d files)" % len(edges))
found = cycles(edges)
for comp in found:
    s = set(comp)
    detail = "; ".join("%s -> %s" % (a, b) for a in comp for b in sorted(edges.get(a, ())) if b in s)
    print("cycle: " + " <-> ".join(comp) + " (" + detail + ")", file=sys.stderr)
check(not found, "no file-level cycle (%d found)" % len(found))
sys.exit(pycheck.summary())
