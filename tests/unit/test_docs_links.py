#!/usr/bin/env python3
"""test_docs_links: README.md stays a README to skim and the docs hold together.

  - every relative link in README.md and docs/*.md names a file that exists, and a '#anchor' into a Markdown file
    names one of its headings (GitHub's slugs);
  - README.md is at most 220 lines and still holds the quick start's two commands (.ci/run calls launch/test.sh,
    the README's test command) and the two answers a newcomer looks for: accept validates a cluster, compare
    (through launch/ab.sh) compares two NCCL versions;
  - the checker itself finds a broken file link and a broken anchor in a made-up page.

Usage: test_docs_links.py SOURCE_DIR. Ends with "N passed, N failed"; exit 1 when any check failed.
"""
import os
import re
import sys
import tempfile

MAX_README_LINES = 220
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                out.add(slug(line.lstrip("#")))
    return out


def broken_links(path):
    """The relative links of one Markdown file that do not resolve, as 'file:line: target (why)'."""
    bad, fence = [], False
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append("%s:%d: %s (no such file)" % (path, n, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s:%d: %s (no heading with that anchor)" % (path, n, target))
    return bad


def main():
    if len(sys.argv) != 2:
        print("usage: test_docs_links.py SOURCE_DIR", file=sys.stderr)
        return 2
    src = sys.argv[1]
    readme = os.path.join(src, "README.md")
    docs = os.path.join(src, "docs")
    pages = [readme] + sorted(os.path.join(docs, p) for p in os.listdir(docs) if p.endswith(".md"))
    for page in pages:
        bad = broken_links(page)
        check(not bad, "broken links:\n  " + "\n  ".join(bad))

    with open(readme, encoding="utf-8") as f:
        text = f.read()
    nlines = text.count("\n")
    check(nlines <= MAX_README_LINES, "README.md has %d lines (at most %d: the reference goes to docs/)" %
          (nlines, MAX_README_LINES))
    check("launch/setup.sh && launch/run.sh -np 2" in text, "README.md lost the quick start's main job command")
    check(re.search(r"^launch/test\.sh ", text, re.M) is not None, "README.md lost the test command")
    with open(os.path.join(src, ".ci", "run"), encoding="utf-8") as f:
        check("launch/test.sh --full" in f.read(), ".ci/run no longer runs launch/test.sh --full")
    check("launch/test.sh --full" in text, "README.md no longer names CI's command, launch/test.sh --full")
    check(re.search(r"validate a cluster.*`accept`", text, re.I) is not None,
          "README.md does not say that accept validates a cluster")
    check(re.search(r"compare two NCCL versions.*launch/ab\.sh.*`compare`", text, re.I | re.S) is not None,
          "README.md does not say that launch/ab.sh and compare compare two NCCL versions")
    for sub in ("run", "accept", "collectives", "compare", "doctor", "topo", "export"):
        check(os.path.exists(os.path.join(docs, sub + ".md")), "docs/%s.md is missing" % sub)
        check("| `%s`" % sub in text, "README.md's table has no row for %s" % sub)

    # The checker can fail: a page with a missing file and a missing anchor.
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "a.md"), "w") as f:
            f.write("# A page\n\n[ok](a.md#a-page) [gone](missing.md) [no anchor](a.md#nowhere)\n"
                    "```\n[in a fence](ignored.md)\n```\n")
        bad = broken_links(os.path.join(tmp, "a.md"))
        check(len(bad) == 2 and "missing.md" in bad[0] and "#nowhere" in bad[1],
              "the checker missed a broken link: %s" % bad)

    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main())
