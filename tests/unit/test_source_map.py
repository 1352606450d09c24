#!/usr/bin/env python3
"""test_source_map: the map of the code matches the ground, so that a newcomer can trust a file's first line.

Over the code files of src/, tests/, launch/ and kernels/ (C, CUDA, Python, shell; fixtures and corpora left
out), the comments of the CMakeLists.txt files and the Markdown of docs/ and README.md:
  - every file's first comment starts with its own name (`run.c:`, `test_run:`, `# plot.py:`);
  - every file of this tree a file cites exists: a path under src/, tests/, launch/, kernels/, docs/ or results/
    (or one relative to src/, `cmd/run.c`), or a bare name (`rules.h`) that some file here has or once had
    (FORMER, below). A file not yet written is cited with "to be written" on the same line;
  - another project's file is cited with its project before it ("NCCL `src/init.cc`", "llm.c's
    `train_gpt2.cu`"): in a comment on its line or the one above, in Markdown in its section or the page's
    title. A bare name that no file here ever had, with no project named, fails;
  - every symbol a header's `defines:` line names is declared in that header (braces expanded, `x_*` a prefix);
  - no tracker number or private note stands in for a fact: "issue" and a number, a notes file a reader cannot
    open (a review's notes: a trial's numbered findings, the reference folder beside the checkout), a device
    session's number ("call" and a number after a card's name). Another project's issue ("nccl-tests issue
    #194") is a fact a reader can open;
  - the checker itself fails on a made-up tree that breaks each rule.

FORMER is the set of names files of this tree had before they moved, from `git log --all --name-only` once
(committed, so that the test does not depend on the depth of the clone): a bare former name is a citation of
this tree, and fails because the file is gone. A name this list lacks and no file has fails too (as another
project's file with no project named), so a stale list lets nothing through.

Usage: test_source_map.py SOURCE_DIR. Ends with "N passed, N failed"; exit 1 when any check failed."""
import os
import io
import re
import sys
import tokenize
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

CODE_DIRS = ("src", "tests", "launch", "kernels")
SKIP_DIRS = ("tests/data", "tests/fuzz/corpus", "tests/cli/safety/before", "tests/cli/safety/after",
             "tests/cli/safety/fixtures")
CODE_EXT = (".c", ".h", ".cu", ".cuh", ".py", ".sh")
CITED_EXT = "c|h|cu|cuh|cc|cpp|hpp|py|sh|md"
ROOTS = ("src/", "tests/", "launch/", "kernels/", "docs/", "results/", ".ci/")
# Projects whose files ddpbench's comments and docs cite; one of these before a citation on its line makes it
# another project's file.
PROJECTS = ("NCCL", "nccl-tests", "PyTorch", "torch", "llm.c", "llmc", "hwloc", "redis", "Open MPI", "OpenMPI",
            "MPICH", "CUDA", "cuBLAS", "cudart", "Slurm", "Prometheus", "node_exporter", "DCGM", "numpy", "pandas",
            "libFuzzer", "cJSON", "inih", "glibc", "Linux", "kernel", "GNU", "Debian", "matplotlib", "karpathy",
            "NVIDIA", "nvidia", "Megatron", "DeepSpeed", "HIP", "ROCm", "RCCL", "PMIx", "UCX", "jq", "promtool",
            "Chromium", "pytest", "CPython", "Python", "FSDP2", "NVML", "OpenBLAS", "CBLAS")
PLANNED = "to be written"
# Tracker numbers, and the notes of reviews kept outside the tree (a reader of the code has neither).
TRACKER = re.compile(r"\bissues? #?\d+|\bFACTS\.md\b|\b[A-Z]\d00 call \d+|\bcall \d+ of the [A-Z]\d00|"
                     r"\b(?:hostile|newcomer) trial \d|shared/reference/|\bredesign\.md\b", re.I)
CITE = re.compile(r"(?<![\w/.\-$<{%%])((?:\.\./|\./)?(?:[\w.\-]+/)*[\w\-]+(?:\.[\w\-]+)*\.(?:%s))(?![\w/]|\.\w)"
                  % CITED_EXT)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def code_files(root):
    out = []
    for top in CODE_DIRS:
        for d, subdirs, files in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(d, root)
            if any(rel == s or rel.startswith(s + "/") for s in SKIP_DIRS):
                subdirs[:] = []
                continue
            for f in files:
                p = os.path.join(rel, f)
                script = top == "launch" and "." not in f and read(os.path.join(root, p)).startswith("#!")
                if f.endswith(CODE_EXT) or script:
                    out.append(p)
    return sorted(out)


def cmake_files(root):
    top = ["CMakeLists.txt"] if os.path.exists(os.path.join(root, "CMakeLists.txt")) else []
    return top + sorted(os.path.relpath(os.path.join(d, "CMakeLists.txt"), root)
                        for t in CODE_DIRS for d, _, fs in os.walk(os.path.join(root, t)) if "CMakeLists.txt" in fs)


def doc_files(root):
    docs = os.path.join(root, "docs")
    return ["README.md"] + sorted("docs/" + p for p in os.listdir(docs) if p.endswith(".md"))


def comments(path, text):
    """The comments of a code file as (first line, text) segments: C's /* */ and //, Python's # and string
    statements (docstrings), shell's #. Code and its strings are not citations (a test's made-up file names)."""
    out = []
    if path.endswith((".c", ".h", ".cu", ".cuh")):
        i, n, line = 0, len(text), 1
        while i < n:
            ch = text[i]
            if text.startswith("/*", i):
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
                out.append((line, text[i:j]))
            elif text.startswith("//", i):
                j = text.find("\n", i)
                j = n if j < 0 else j
                out.append((line, text[i:j]))
            elif ch in "\"'":
                j = i + 1
                while j < n and text[j] != ch and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j += 1
            else:
                j = i + 1
            line += text.count("\n", i, j)
            i = j
        return out
    if path.endswith(".py"):
        try:
            toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return [(1, text)]
        prev = tokenize.NEWLINE
        for t in toks:
            if t.type == tokenize.COMMENT:
                out.append((t.start[0], t.string))
            elif t.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL,
                                                         tokenize.ENCODING):
                out.append((t.start[0], t.string))  # a string statement: a docstring
            if t.type not in (tokenize.COMMENT, tokenize.NL):
                prev = t.type
        return out
    block = None
    for k, l in enumerate(text.split("\n"), 1):  # shell: a run of comment lines is one segment
        m = re.search(r"(?:^|\s)#(?!!)(.*)$", l)
        if m and l.strip().startswith("#"):
            if block and block[2] == k - 1:
                block[1] += "\n" + m.group(0)
                block[2] = k
            else:
                block = [k, m.group(0), k]
                out.append(block)
        elif m:
            out.append([k, m.group(0), k])
            block = None
        else:
            block = None
    return [(b[0], b[1]) for b in out]


def sections(text):
    """Markdown as (first line, section) segments, a section running from one heading to the next; links left
    out (test_docs_links checks those)."""
    out, start, buf, fence = [], 1, [], False
    for k, l in enumerate(text.split("\n"), 1):
        if l.startswith("```"):
            fence = not fence
        if l.startswith("#") and not fence and buf:
            out.append((start, "\n".join(buf)))
            buf, start = [], k
        buf.append(re.sub(r"\]\([^)]*\)", "]", l))
    if buf:
        out.append((start, "\n".join(buf)))
    return out


def first_word(text):
    """The first word of a file's first comment ('' when it opens with code)."""
    for line in text.split("\n"):
        s = line.strip()
        if not s or s.startswith("#!") or s.startswith("# shellcheck") or s.startswith("# -*-") or s == "#":
            continue
        m = re.match(r'^(?:/\*+|//|#|"""|\'\'\'|\*)\s*(\S+)', s)
        return m.group(1).rstrip(":,.") if m else ""
    return ""


def opens_with_name(path, text):
    name = os.path.basename(path)
    w = first_word(text).strip("`")
    return w in (name, os.path.splitext(name)[0]) or w.endswith("/" + name)


def tree_names(root):
    """Every path of the tree (relative to root) and every base name."""
    paths, names = set(), set()
    for d, subdirs, files in os.walk(root):
        subdirs[:] = [s for s in subdirs if s not in (".git", "build")]
        for f in files + subdirs:
            p = os.path.relpath(os.path.join(d, f), root)
            paths.add(p)
            names.add(f)
    return paths, names


def names_project(before):
    return any(re.search(r"(?<![\w/])%s(?![\w])" % re.escape(p), before) for p in PROJECTS)


def citation_problems(path, segments, paths, names, former, scope=1):
    """The citations in one file's segments that do not hold, as 'file:line: what'. Another project is named
    before the citation, on its line or the `scope` lines above in the same segment (a comment: 1; a Markdown
    section: all of it); a planned file has "to be written" on its line."""
    bad = []
    here = os.path.dirname(path)
    for first, seg in segments:
        lines = seg.split("\n")
        for k, line in enumerate(lines):
            n = first + k
            for m in CITE.finditer(line):
                c = m.group(1)
                if c in PROJECTS:
                    continue
                before = "\n".join(lines[max(0, k - scope):k] + [line[:m.start()]])
                if "://" in line[:m.start()].split(" ")[-1] or PLANNED in line or names_project(before):
                    continue
                if "/" in c:
                    rel = os.path.normpath(os.path.join(here, c))
                    if c.startswith(ROOTS):
                        ok = os.path.normpath(c) in paths
                    else:
                        ok = rel in paths or os.path.normpath(c) in paths or ("src/" + c) in paths or \
                            ("tests/" + c) in paths
                    if not ok:
                        bad.append("%s:%d: %s (no such file here; another project's file names its project)" %
                                   (path, n, c))
                elif c in names:
                    continue
                elif c in former:
                    bad.append("%s:%d: %s (a former name: the file moved or is gone)" % (path, n, c))
                else:
                    bad.append("%s:%d: %s (no file here has this name; another project's file names its project, "
                               "a planned one says \"%s\")" % (path, n, c, PLANNED))
    return bad


def tracker_problems(path, segments):
    bad = []
    for first, seg in segments:
        lines = seg.split("\n")
        for k, line in enumerate(lines):
            for m in TRACKER.finditer(line):
                if names_project(line[max(0, m.start() - 24):m.start()]):
                    continue  # another project's tracker, which a reader can open
                bad.append("%s:%d: '%s' (state the fact it stood for)" % (path, first + k, m.group(0)))
    return bad


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def expand(item):
    """A defines: entry to the names it stands for: braces, '(s)' and '/ _suffix' alternatives."""
    m = re.search(r"\{([^}]*)\}", item)
    if m:
        return [n for alt in m.group(1).split(",") for n in expand(item[:m.start()] + alt.strip() + item[m.end():])]
    m = re.search(r"\((\w+)\)", item)
    if m:
        return expand(item[:m.start()] + item[m.end():]) + expand(item[:m.start()] + m.group(1) + item[m.end():])
    return [item]


def defines_problems(path, text):
    bad = []
    code = strip_comments(text)
    for m in re.finditer(r"defines:(.*?)(?:\*/|\n\s*\*\s*\n|\.\s+[A-Z]|\.\s*\n)", text, re.S):
        body = re.sub(r"\n\s*\*", " ", m.group(1))
        body = re.sub(r"\s*,\s*", ",", re.sub(r"\s+", " ", body))
        # alternatives written "a / _b" (nvml_open / nvml_close, x_open / _poll): each a name, '_b' on a's stem
        parts, depth, cur = [], 0, ""
        for ch in body:  # split on ',' and ';' outside braces and parentheses
            depth += ch in "{(" and 1 or ch in "})" and -1 or 0
            if ch in ",;" and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        items = []
        for part in parts:
            part = re.sub(r"^[^:]*:\s*", "", part) if ":" in part else part
            alts = [a.strip() for a in part.split(" / ")]
            stem = alts[0].split(" ")[0]
            for a in alts:
                if a.startswith("_"):  # 'x_open / _poll': x_poll; 'gen_str / _width_str': width_str for gen_str
                    a = "_".join(stem.split("_")[:-(a.count("_"))]) + a
                items.append(a)
        for it in items:
            tok = re.match(r"[\w{}(),*]+", it.strip())
            if not tok or it.strip().startswith(("the ", "a ")):
                continue
            for name in expand(tok.group(0)):
                if not re.match(r"^[A-Za-z_]\w*\*?$", name):
                    continue
                if name.endswith("*"):
                    found = re.search(r"\b%s\w*" % re.escape(name[:-1]), code)
                else:
                    found = re.search(r"\b%s\b" % re.escape(name), code)
                if not found:
                    bad.append("%s: defines %s, which it does not declare" % (path, name))
    return bad


def former_names(root):
    p = os.path.join(root, "tests", "unit", "former_names.txt")
    return {line.strip() for line in read(p).split("\n") if line.strip() and not line.startswith("#")}


def check_tree(root, former):
    """Every problem of the tree at root, by rule."""
    paths, names = tree_names(root)
    out = {"opening": [], "citation": [], "tracker": [], "defines": []}
    for p in code_files(root):
        text = read(os.path.join(root, p))
        if not opens_with_name(p, text):
            out["opening"].append("%s: its first comment opens with '%s', not its name" % (p, first_word(text)))
        segs = comments(p, text)
        out["citation"] += citation_problems(p, segs, paths, names, former)
        out["tracker"] += tracker_problems(p, segs)
        if p.endswith(".h"):
            out["defines"] += defines_problems(p, text)
    for p in cmake_files(root):  # CMake's comments: citations and facts only (they open with no name)
        segs = comments(p, read(os.path.join(root, p)))
        out["citation"] += citation_problems(p, segs, paths, names, former)
        out["tracker"] += tracker_problems(p, segs)
    for p in doc_files(root):
        segs = sections(read(os.path.join(root, p)))
        title = segs[0][1].split("\n")[0] + "\n" if segs else ""  # a page about another project names it here
        segs = [(first, title + seg) for first, seg in segs]
        out["citation"] += citation_problems(p, segs, paths, names, former, scope=10 ** 6)
        out["tracker"] += tracker_problems(p, segs)
    return out


def self_test():
    """A made-up tree that breaks each rule once, and keeps each once: every rule must fire, and only there."""
    with tempfile.TemporaryDirectory() as t:
        files = {
            "src/base/good.h": "/* good.h: fine. NCCL's `src/init.cc` and `enqueue.cc` are NCCL's.\n"
                               " * defines: good_{a,b}, GOOD_* */\n"
                               "int good_a(void); int good_b(void);\n#define GOOD_X 1\n",
            "src/base/good.c": "/* good.c: see good.h and base/good.h; plan.c (to be written) will plan. */\n",
            "src/base/wrong.c": "/* old_wrong.c: opens with a former name. */\n",
            "src/base/cites.c": "/* cites.c: see gone.h, moved.c, base/none.c and issue 12;\n"
                                " * nccl-tests issue #194. */\n",
            "src/base/defs.h": "/* defs.h: defines: defs_real, defs_missing */\nint defs_real;\n",
            "tests/unit/test_x.py": '"""test_x: a test, after llm.c\'s train_gpt2.cu."""\n# as FACTS.md says\n',
            "tests/unit/test_y.sh": "# test_y.sh: measured on the H200 call 2 (PyTorch's issue 5 is fine).\n"
                                    "# as hostile trial 2 found\n",
            "launch/tool": "#!/bin/sh\n# tool: a launcher.\n",
            "docs/a.md": "# A\n\nSee `src/base/good.c` and [a link](src/nowhere.c) and `src/base/gone.c`.\n",
            "README.md": "# R\n",
            "tests/CMakeLists.txt": "# tests of issue 9 and tests/none.c\nadd_test(x)\n",
            "tests/unit/former_names.txt": "moved.c\nold_wrong.c\n",
        }
        for p, text in files.items():
            os.makedirs(os.path.join(t, os.path.dirname(p)), exist_ok=True)
            with open(os.path.join(t, p), "w") as f:
                f.write(text)
        got = check_tree(t, former_names(t))
        check([x.split(":")[0] for x in got["opening"]] == ["src/base/wrong.c"],
              "the self-test's wrong opening alone is found: %s" % got["opening"])
        cited = sorted(x.split(": ", 1)[1].split(" ")[0] for x in got["citation"])
        check(cited == ["FACTS.md", "base/none.c", "gone.h", "moved.c", "old_wrong.c", "src/base/gone.c",
                        "tests/none.c"],
              "the self-test's missing files alone are found: %s" % got["citation"])
        check(any("moved.c (a former name" in x for x in got["citation"]), "a former name is named as such")
        check(len(got["tracker"]) == 5, "the self-test's 2 issue numbers, notes, review and device call are found: %s" %
              got["tracker"])
        check(got["defines"] == ["src/base/defs.h: defines defs_missing, which it does not declare"],
              "the self-test's missing defines: symbol alone is found: %s" % got["defines"])


def main():
    if len(sys.argv) != 2:
        print("usage: test_source_map.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = sys.argv[1]
    self_test()
    got = check_tree(root, former_names(root))
    check(len(code_files(root)) > 100, "the scan found the tree's code files (%d)" % len(code_files(root)))
    for rule, what in (("opening", "files whose first comment does not open with their name"),
                       ("citation", "citations of files that do not exist"),
                       ("tracker", "tracker numbers and notes instead of facts"),
                       ("defines", "defines: entries a header does not declare")):
        check(not got[rule], "%d %s:\n  %s" % (len(got[rule]), what, "\n  ".join(got[rule])))
    return pycheck.summary()


if __name__ == "__main__":
    sys.exit(main())
