#!/usr/bin/env python3
"""test_labels: the label rules of tests/CMakeLists.txt hold for every test CTest knows, from `ctest
--show-only=json-v1` (each test's command, properties and the CMakeLists.txt that added it):
  - a test carries the label of its folder (tests/<folder>/CMakeLists.txt added it; a test that
    tests/CMakeLists.txt adds itself, the folder of its script), and only labels of the known set;
  - a unit test runs no MPI launcher; a test of mpi/ runs under mpiexec (or is given it, to start it itself);
  - a gpu-labelled test holds the GPU lock (RESOURCE_LOCK gpus); a multinode one runs alone (RUN_SERIAL);
  - every test has a TIMEOUT;
  - the checker itself fails on a made-up listing that breaks each rule.

Usage: test_labels.py CTEST_COMMAND BUILD_DIR. Ends with "N passed, N failed"; exit 1 when any check failed."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

KINDS = ("unit", "mpi", "cli", "gpu", "multinode", "fuzz")
KNOWN = set(KINDS) | {"slow"}


def folder_of(listing, test):
    """The tests/<folder> whose CMakeLists.txt added the test (through ddpbench_add_test or add_test)."""
    g = listing["backtraceGraph"]
    node, files = test.get("backtrace"), []
    while node is not None:
        n = g["nodes"][node]
        files.append(g["files"][n["file"]])
        node = n.get("parent")
    for f in files:
        m = re.search(r"(?:^|/)tests/([^/]+)/CMakeLists\.txt$", f)
        if m:
            return m.group(1)
    for arg in test.get("command", []):  # added by tests/CMakeLists.txt itself: its script's folder
        m = re.search(r"(?:^|/)tests/([^/]+)/[^/]+$", arg)
        if m and m.group(1) in KINDS:
            return m.group(1)
    return None


def problems(listing):
    bad = []
    for t in listing["tests"]:
        name, props = t["name"], {p["name"]: p["value"] for p in t.get("properties", [])}
        labels, cmd = props.get("LABELS", []), t.get("command", [])
        folder = folder_of(listing, t)
        if folder not in labels:
            bad.append("%s: tests/%s adds it, but its labels are %s" % (name, folder, labels))
        if set(labels) - KNOWN:
            bad.append("%s: unknown labels %s (known: %s)" % (name, sorted(set(labels) - KNOWN), sorted(KNOWN)))
        launcher = bool(cmd) and os.path.basename(cmd[0]).startswith(("mpiexec", "mpirun"))
        if folder == "unit" and launcher:
            bad.append("%s: a unit test runs under %s" % (name, cmd[0]))
        starts = any(os.path.basename(a).startswith(("mpiexec", "mpirun")) for a in cmd[1:])  # launches itself
        if folder == "mpi" and not launcher and not starts:
            bad.append("%s: a test of mpi/ runs without mpiexec" % name)
        if "gpu" in labels and "gpus" not in props.get("RESOURCE_LOCK", []):
            bad.append("%s: labelled gpu without the GPU lock (RESOURCE_LOCK gpus)" % name)
        if "multinode" in labels and not props.get("RUN_SERIAL"):
            bad.append("%s: labelled multinode without RUN_SERIAL" % name)
        if not props.get("TIMEOUT"):
            bad.append("%s: no TIMEOUT" % name)
    return bad


def self_test():
    def test(name, file, labels, cmd=("/x/test",), **props):
        p = [{"name": "LABELS", "value": list(labels)}, {"name": "TIMEOUT", "value": 10.0}]
        p += [{"name": k, "value": v} for k, v in props.items()]
        return {"name": name, "backtrace": file, "command": list(cmd), "properties": p}
    listing = {"backtraceGraph": {"files": ["/s/tests/CMakeLists.txt", "/s/tests/unit/CMakeLists.txt",
                                            "/s/tests/mpi/CMakeLists.txt", "/s/tests/gpu/CMakeLists.txt"],
                                  "nodes": [{"file": 0}, {"file": 1}, {"file": 2}, {"file": 3},
                                            {"file": 0, "parent": 1}]},
               "tests": [test("ok", 4, ["unit"]),
                         test("top", 0, ["unit"], ("/py", "/s/tests/unit/t.py")),
                         test("wrong_folder", 1, ["cli"]),
                         test("unknown", 1, ["unit", "fast"]),
                         test("unit_mpi", 1, ["unit"], ("/usr/bin/mpiexec", "x")),
                         test("mpi_bare", 2, ["mpi"]),
                         test("gpu_nolock", 3, ["gpu"])]}
    listing["tests"].append({"name": "no_timeout", "backtrace": 1, "command": ["/x"],
                             "properties": [{"name": "LABELS", "value": ["unit"]}]})
    got = sorted({b.split(":")[0] for b in problems(listing)})
    check(got == ["gpu_nolock", "mpi_bare", "no_timeout", "unit_mpi", "unknown", "wrong_folder"],
          "the self-test's broken tests alone are found: %s" % problems(listing))


def main():
    if len(sys.argv) != 3:
        print("usage: test_labels.py CTEST_COMMAND BUILD_DIR", file=sys.stderr)
        return 2
    self_test()
    out = subprocess.run([sys.argv[1], "--show-only=json-v1"], cwd=sys.argv[2], capture_output=True, text=True,
                         check=True).stdout
    listing = json.loads(out)
    check(len(listing["tests"]) > 50, "ctest lists the project's tests (%d)" % len(listing["tests"]))
    bad = problems(listing)
    check(not bad, "%d tests break the label rules:\n  %s" % (len(bad), "\n  ".join(bad)))
    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main())
