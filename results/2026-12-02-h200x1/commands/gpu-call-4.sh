#!/usr/bin/env bash
# GPU call 4 of 2026-12-02 on nvidia-h200: call 1's second round had the new build's 1024 x 32 x 1024 bf16 eager ddp
# step 2.4 % above the old build's two runs (its first round inside them). Old (.old-src, 4b3775c) and new again,
# alternated 6 times on that preset and on its --cuda-graph variant, --peak-seconds 0. Output: $OUT/table.txt.
set -uo pipefail
source .device-deps/env.sh
o=/tmp/r4; mkdir -p $o
(cd .old-src && cmake --preset gpu && cmake --build --preset gpu --target ddpbench) >$o/build-old.log 2>&1 &
{ cmake --preset gpu && cmake --build --preset gpu --target ddpbench; } >$o/build-new.log 2>&1 || { tail -30 $o/build-new.log; exit 1; }
wait
old=.old-src/build/gpu/ddpbench new=build/gpu/ddpbench
for i in 1 2 3 4 5 6; do for c in eager graph; do for s in A B; do
  bin=$new; [ $s = A ] && bin=$old; g=""; [ $c = graph ] && g=--cuda-graph
  $bin --config configs/h200-1024x32x1024-bf16.ini $g --peak-seconds 0 --json $o/$c-$s$i.json --force --quiet >/dev/null 2>&1 || echo "$c $s$i failed"
done; done; done
python3 - $o <<'PY' | tee $OUT/table.txt
import json, sys, glob, os, statistics as st
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f)); b = os.path.basename(f)[:-5]; c, s = b.rsplit("-", 1)
    ddp = d["phases"]["ddp"]["step_ms"]["median"]; loc = d["phases"]["local"]["step_ms"]["median"]
    print(b, d["weights_checksum"], "local %.4f ddp %.4f" % (loc, ddp))
    rows.setdefault((c, s[0]), []).append(ddp)
for (c, s), v in sorted(rows.items()):
    print(c, s, "ddp median of runs %.4f  min %.4f  max %.4f" % (st.median(v), min(v), max(v)))
PY
