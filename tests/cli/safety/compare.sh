#!/usr/bin/env bash
# compare.sh BEFORE AFTER: what changed between two capture.sh directories, section by section (launch,
# help, errors, messages, outputs, records, exit), as a report for a person to read. Cases named in
# expected-diffs.txt (next to this script) are tagged [expected]; every other change is [UNEXPECTED].
# Exit 0 always, whatever changed; exit 1 only when BEFORE or AFTER is not a directory.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BEFORE AFTER" >&2
  exit 1
fi
for d in "$1" "$2"; do
  if [ ! -d "$d" ]; then
    echo "compare.sh: $d is not a directory" >&2
    exit 1
  fi
done
HERE=$(cd "$(dirname "$0")" && pwd)
PY=$(python3 -c 'import sys; print(sys.executable)')
exec "$PY" -S - "$1" "$2" "$HERE/expected-diffs.txt" <<'EOF'
import difflib
import os
import sys

A, B, EXPECTED = sys.argv[1], sys.argv[2], sys.argv[3]
expected = set()
if os.path.exists(EXPECTED):
    with open(EXPECTED) as f:
        expected = {l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")}
changes = {"expected": set(), "unexpected": set()}


def tag(name):
    if name in expected:
        changes["expected"].add(name)
        return "[expected]"
    changes["unexpected"].add(name)
    return "[UNEXPECTED]"


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


def files(d):
    out = set()
    for root, _, names in os.walk(d):
        for n in names:
            out.add(os.path.relpath(os.path.join(root, n), d))
    return out


def title(t):
    print()
    print("=" * 100)
    print(t)
    print("=" * 100)


def tsv(path):
    """case -> the other columns, in file order."""
    rows = read(path)
    out = {}
    for r in rows or []:
        k, _, rest = r.partition("\t")
        out[k] = rest.split("\t")
    return out, rows is not None


print("compare.sh: BEFORE %s" % A)
print("            AFTER  %s" % B)
fa, fb = files(A), files(B)

# ---- launch ----
title("launch (how the MPI subcommands were started)")
la, lb = read(os.path.join(A, "launch.txt")), read(os.path.join(B, "launch.txt"))
if la == lb:
    print("same")
else:
    for l in difflib.unified_diff(la or [], lb or [], "before/launch.txt", "after/launch.txt", lineterm=""):
        print(l)

# ---- help ----
title("help texts (help/*.txt: exit code, stdout, stderr of --help)")
helps = sorted(x for x in fa | fb if x.startswith("help" + os.sep))
nsame = 0
for h in helps:
    ta, tb = read(os.path.join(A, h)), read(os.path.join(B, h))
    if ta == tb:
        nsame += 1
        continue
    name = os.path.splitext(os.path.basename(h))[0]
    if ta is None or tb is None:
        print("%s %s: only %s" % (tag("help/" + name), h, "AFTER" if ta is None else "BEFORE"))
        continue
    print("%s %s changed:" % (tag("help/" + name), h))
    for l in difflib.unified_diff(ta, tb, "before/" + h, "after/" + h, lineterm=""):
        print("    " + l)
print("%d of %d help files unchanged" % (nsame, len(helps)))

# ---- errors ----
title("bad inputs (errors.tsv: exit code and first 'ddpbench' stderr line per case)")
ea, oka = tsv(os.path.join(A, "errors.tsv"))
eb, okb = tsv(os.path.join(B, "errors.tsv"))
if not (oka and okb):
    print("errors.tsv missing in %s" % ("BEFORE" if not oka else "AFTER"))
only_a = [k for k in ea if k not in eb]
only_b = [k for k in eb if k not in ea]
changed = [k for k in ea if k in eb and ea[k] != eb[k]]
for k in only_a:
    print("%s only BEFORE: %s" % (tag(k), k))
for k in only_b:
    print("%s only AFTER:  %s" % (tag(k), k))
exit_changes = {}
for k in changed:
    (xa, ma), (xb, mb) = (ea[k] + [""])[:2], (eb[k] + [""])[:2]
    exit_changes.setdefault((xa, xb), 0)
    exit_changes[(xa, xb)] += 1
    print("%s %s" % (tag(k), k))
    print("      exit    %-4s -> %s%s" % (xa, xb, "" if xa != xb else "   (same)"))
    if ma != mb:
        print("      before  %s" % ma)
        print("      after   %s" % mb)
    else:
        print("      message same: %s" % ma)
print("%d cases: %d unchanged, %d changed, %d only BEFORE, %d only AFTER"
      % (len(set(ea) | set(eb)), len(ea) - len(changed) - len(only_a), len(changed), len(only_a), len(only_b)))
if exit_changes:
    print("changed cases by exit code (before->after): " + ", ".join("%s->%s x%d" % (x, y, n) for (x, y), n in sorted(exit_changes.items())))

# ---- messages and outputs ----
for name, what in (("messages.tsv", "every 'ddpbench' stderr line per case (errors.tsv has the first)"),
                   ("outputs.tsv", "files a case left in its TMP dir")):
    title("%s (%s)" % (name, what))
    ma_, _ = tsv(os.path.join(A, name))
    mb_, _ = tsv(os.path.join(B, name))
    n = 0
    for k in ma_:
        if k not in mb_ or ma_[k] == mb_[k]:
            continue
        if name == "messages.tsv" and k in ea and k in eb and ma_[k] == ea[k][1:2] and mb_[k] == eb[k][1:2]:
            continue  # one line, the one shown above
        n += 1
        print("%s %s" % (tag(k), k))
        print("      before  %s" % "\t".join(ma_[k]))
        print("      after   %s" % "\t".join(mb_[k]))
    print("%d cases changed" % n)

# ---- records ----
title("records (identities of the 2-rank --json runs: records/*.txt; + appeared, - disappeared)")
recs = sorted(x for x in fa | fb if x.startswith("records" + os.sep))
nsame = 0
for r in recs:
    ra, rb = read(os.path.join(A, r)), read(os.path.join(B, r))
    if ra == rb:
        nsame += 1
        continue
    name = os.path.basename(r)
    if ra is None or rb is None:
        print("%s %s: only %s" % (tag("records/" + name), r, "AFTER" if ra is None else "BEFORE"))
        continue
    sa, sb = set(ra), set(rb)
    gone, new = sorted(sa - sb), sorted(sb - sa)
    print("%s %s: %d lines before, %d after; %d disappeared, %d appeared"
          % (tag("records/" + name), r, len(ra), len(rb), len(gone), len(new)))
    for l in gone[:200]:
        print("    - " + l)
    if len(gone) > 200:
        print("    - ... %d more" % (len(gone) - 200))
    for l in new[:200]:
        print("    + " + l)
    if len(new) > 200:
        print("    + ... %d more" % (len(new) - 200))
    if not gone and not new:
        print("    (same lines, another order or multiplicity)")
print("%d of %d record files unchanged" % (nsame, len(recs)))

# ---- exit ----
title("exit codes of the recorded runs (exit.txt)")
xa = dict(l.split(" ", 1) for l in (read(os.path.join(A, "exit.txt")) or []) if " " in l)
xb = dict(l.split(" ", 1) for l in (read(os.path.join(B, "exit.txt")) or []) if " " in l)
n = 0
for k in sorted(set(xa) | set(xb)):
    if xa.get(k) != xb.get(k):
        n += 1
        print("%s %-20s %s -> %s" % (tag("exit/" + k), k, xa.get(k, "(none)"), xb.get(k, "(none)")))
print("%d of %d runs changed exit code" % (n, len(set(xa) | set(xb))))

title("summary")
print("%d changed items listed in expected-diffs.txt, %d UNEXPECTED (a case counts once, whatever file shows it)"
      % (len(changes["expected"]), len(changes["unexpected"])))
if not changes["expected"] and not changes["unexpected"]:
    print("no differences")
sys.exit(0)
EOF
