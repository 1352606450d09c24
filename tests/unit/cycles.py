#!/usr/bin/env python3
"""cycles.py: no two files of ddpbench need each other, from the symbols the objects define and use.

argv: [--cc CC] [--ar AR] the layers' static libraries (libddpbench_<layer>.a). For every object, `nm -A -P` gives
the symbols it defines (T, D, B, R, C, V, W, G, S) and uses (U), one per line as `lib.a[obj.c.o]: symbol TYPE ...`;
file A points at file B when A uses a symbol B defines. A strongly connected component of more than one file is
a cycle: the files cannot be understood, tested or moved one at a time.

The one exception: the MPI_* symbols that runtime/mpi_where.c defines are not edges. mpi_where.c interposes on
MPI through PMPI (it defines MPI_Send and the rest and calls PMPI_Send), so at link time every MPI caller, among
them runtime/dist.c, resolves to it; the caller depends on MPI, not on the wrapper. Counted as edges they make the
triangle dist.c -> mpi_where.c -> watchdog.c -> dist.c, which no one can cut. mpi_where.c's other edges count.

A graph with fewer edges than objects, or fewer than MIN_EDGES, fails: the parser read nothing (GNU nm's plain
`-A` format once gave 0 edges, and the test passed). The self-test compiles a two-object archive with a real cycle
(each object calls the other's function) with CC and AR, reads it through the same nm path and must see every check fail
but the empty-graph one. Ends with "N passed, N failed"."""
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.setrecursionlimit(100000)

MIN_EDGES = 300  # 362 at the time of writing (house review); fewer means the parser or the build lost objects
DEFINES = set("TDBRCVWGS")
NM_LINE = re.compile(r"^.*\[(.+\.o)\]: (\S+) (\S)")  # lib.a[obj.c.o]: symbol TYPE [value size]
PMPI_WRAPPER = "runtime/mpi_where"


def graph(archives):
    """(edges, objects): edges[file] = the files whose symbols it uses; files named layer/stem."""
    defs, uses, objects = {}, collections.defaultdict(set), set()
    for a in archives:
        layer = os.path.basename(a)[len("libddpbench_"):-2]
        out = subprocess.run(["nm", "-A", "-P", a], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = NM_LINE.match(line)
            if not m:
                continue
            obj, sym, kind = m.groups()
            f = layer + "/" + re.sub(r"(\.c|\.cu|\.cc)?\.o$", "", obj)
            objects.add(f)
            uses.setdefault(f, set())
            if kind in DEFINES:
                if f == PMPI_WRAPPER and sym.startswith("MPI_"):
                    continue  # the PMPI interposition: see the docstring
                defs.setdefault(sym, f)
            elif kind == "U":
                uses[f].add(sym)
    edges = {f: {defs[s] for s in us if s in defs and defs[s] != f} for f, us in uses.items()}
    return edges, objects


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


def failures(archives, min_edges=MIN_EDGES):
    """What is wrong with the graph of archives, one line each (empty: nothing)."""
    edges, objects = graph(archives)
    n = sum(map(len, edges.values()))
    bad = []
    if n < len(objects) or n < min_edges:
        bad.append("the graph has %d edges over %d objects (at least %d and one per object expected): nm's "
                   "output was not read" % (n, len(objects), min_edges))
    for comp in cycles(edges):
        s = set(comp)
        detail = "; ".join("%s -> %s" % (a, b) for a in comp for b in sorted(edges.get(a, ())) if b in s)
        bad.append("cycle: " + " <-> ".join(comp) + " (" + detail + ")")
    return bad


def self_test(cc, ar):
    """A two-object archive with a real cycle, built here: both checks must fire."""
    with tempfile.TemporaryDirectory() as tmp:
        src = {"a.c": "int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n",
               "b.c": "int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n"}
        for name, text in src.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
            subprocess.run([cc, "-c", name, "-o", name + ".o"], cwd=tmp, check=True)
        lib = os.path.join(tmp, "libddpbench_demo.a")
        subprocess.run([ar, "rcs", lib, os.path.join(tmp, "a.c.o"), os.path.join(tmp, "b.c.o")], check=True)
        edges, objects = graph([lib])
        check(objects == {"demo/a", "demo/b"}, "the self-test's archive reads as its two objects: %s" % sorted(objects))
        check(edges == {"demo/a": {"demo/b"}, "demo/b": {"demo/a"}}, "the self-test's two edges are read: %s" % edges)
        bad = failures([lib], min_edges=2)
        check(len(bad) == 1 and bad[0].startswith("cycle: demo/a <-> demo/b"),
              "the self-test's cycle fails the check: %s" % bad)
        bad = failures([lib])
        check(len(bad) == 2 and "edges" in bad[0], "a graph of 2 edges fails the edge count: %s" % bad)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def main(argv):
    cc, ar = os.environ.get("CC", "cc"), "ar"
    while argv and argv[0] in ("--cc", "--ar"):
        if argv[0] == "--cc":
            cc = argv[1]
        else:
            ar = argv[1]
        argv = argv[2:]
    if not argv:
        print("usage: cycles.py [--cc CC] [--ar AR] libddpbench_<layer>.a ...", file=sys.stderr)
        return 2
    check(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]], "a made-up cycle is found")
    check(cycles({"a": {"b"}, "b": {"c"}, "d": {"a"}}) == [], "a made-up chain is no cycle")
    self_test(cc, ar)
    edges, objects = graph(argv)
    print("%d objects, %d edges" % (len(objects), sum(map(len, edges.values()))))
    bad = failures(argv)
    found = [b for b in bad if b.startswith("cycle: ")]
    check(len(found) == len(bad), "; ".join(b for b in bad if b not in found))
    for line in found:
        print(line, file=sys.stderr)
    check(not found, "no file-level cycle (%d found)" % len(found))
    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
