#!/usr/bin/env bash
# GPU call 5 of 2026-12-02 on nvidia-h200: call 4 had the new build's eager 1024 x 32 x 1024 bf16 step above the
# old's in 4 of 6 pairs, always run right after the old one (its graph variant equal). The same preset eager only,
# 8 pairs, the order reversed in every other pair (AB BA AB ...), so that position and build are told apart.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r5; mkdir -p $o
(cd .old-src && cmake --preset gpu && cmake --build --preset gpu --target ddpbench) >$o/build-old.log 2>&1 &
{ cmake --preset gpu && cmake --build --preset gpu --target ddpbench; } >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=build/gpu/ddpbench
for i in 1 2 3 4 5 6 7 8; do
  order="A B"; [ $((i % 2)) = 0 ] && order="B A"
  for s in $order; do
    bin=$new; [ $s = A ] && bin=$old
    $bin --config configs/h200-1024x32x1024-bf16.ini --peak-seconds 0 --json $o/eager-$s$i.json --force --quiet >/dev/null 2>&1 || echo "$s$i failed"
  done
done
python3 - $o <<'PY' | tee $OUT/table.txt
import json, sys, glob, os, statistics as st
v = {"A": [], "B": []}
for i in range(1, 9):
    first = "A" if i % 2 else "B"
    row = []
    for s in (first, "B" if first == "A" else "A"):
        d = json.load(open("%s/eager-%s%d.json" % (sys.argv[1], s, i)))
        ddp = d["phases"]["ddp"]["step_ms"]["median"]; loc = d["phases"]["local"]["step_ms"]["median"]
        v[s].append((loc, ddp)); row.append("%s%d %s local %.4f ddp %.4f" % (s, i, d["weights_checksum"], loc, ddp))
    print(" | ".join(row))
for s in "AB":
    print(s, "local median %.4f (%.4f-%.4f), ddp median %.4f (%.4f-%.4f)" % (
        st.median(x[0] for x in v[s]), min(x[0] for x in v[s]), max(x[0] for x in v[s]),
        st.median(x[1] for x in v[s]), min(x[1] for x in v[s]), max(x[1] for x in v[s])))
PY
