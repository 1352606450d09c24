#!/usr/bin/env python3
"""test_docs_mpirun: every mpirun command line in README.md and docs/*.md passes -q, as README says to, so that
a reader who copies one sees ddpbench's one-line errors and not Open MPI's 11-line notice after them.

  - a command line is `mpirun` followed by -np, -n, -H, --host or --hostfile (prose such as "mpirun's own
    output" or "with mpirun --output-filename" is not one); each must carry -q or --quiet before ddpbench;
  - the checker finds the line in a made-up page that lacks it, and passes its fixed copy.

Usage: test_docs_mpirun.py SOURCE_DIR. Ends with "N passed, N failed"; exit 1 when any check failed.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

COMMAND = re.compile(r"\bmpirun((?:\s+-\S+(?:\s+(?!-)\S+)?)*?)\s+(-np|-n|-H|--host|--hostfile)\b(.*)")


def missing_q(text):
    """The lines of text with an mpirun command line lacking -q: [(line number, line)]."""
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"\bmpirun\s+-", line):
            cmd = line[m.start():]
            cmd = re.split(r"ddpbench|`|\$bin|\"\$", cmd)[0]  # up to the program (or the end of the code span)
            if COMMAND.match(cmd) and not re.search(r"(^|\s)(-q|--quiet)(\s|$)", cmd):
                bad.append((n, line.strip()))
    return bad


src = sys.argv[1]
pages = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
lines = 0
for page in pages:
    with open(page, encoding="utf-8") as f:
        text = f.read()
    lines += len(re.findall(r"\bmpirun\s+-q\b", text))
    for n, line in missing_q(text):
        check(False, "%s:%d: mpirun without -q: %s" % (os.path.relpath(page, src), n, line))
check(lines >= 10, "%d mpirun -q command lines found in %d pages (the checker reads the docs)" % (lines, len(pages)))

made_up = "Run `mpirun -np 8 build/dev/ddpbench accept` first.\n    mpirun --hostfile h -np 2 ddpbench\nprose: mpirun's own\n"
check([n for n, _ in missing_q(made_up)] == [1, 2], "the checker names both lines of a made-up page: %r" % missing_q(made_up))
fixed = made_up.replace("mpirun -np", "mpirun -q -np").replace("mpirun --hostfile", "mpirun -q --hostfile")
check(missing_q(fixed) == [], "and passes their fixed copies: %r" % missing_q(fixed))
sys.exit(pycheck.summary())
