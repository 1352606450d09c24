#!/usr/bin/env bash
# GPU call 3 (issue 25): the new build's NCCL account on the H200, as a user sees it: doctor, collectives, accept
# and the default job with --json; the user's own NCCL_DEBUG_FILE; compare of collectives under NCCL 2.28.3
# against 2.28.9 (the machine's PyTorch copy), which must name the version change; then ctest -L gpu (with
# test_nccl_prof_gpu) and the schema on every document. Reuses call 2's /tmp/bld-new when the machine is warm.
set -uo pipefail
source .device-deps/env.sh
new=/tmp/bld-new/ddpbench
if [ ! -x $new ]; then
  (cmake -S .new-src -B /tmp/bld-new --preset gpu >/dev/null && cmake --build /tmp/bld-new -j 16) >/tmp/b3.log 2>&1 || { tail -30 /tmp/b3.log; exit 1; }
  echo "(rebuilt: the machine was not warm)"
fi
cd .new-src
o=$OUT
$new doctor --json $o/doctor.json > $o/doctor.txt 2>&1; echo "doctor rc=$?"; grep -A3 "NCCL's account" $o/doctor.txt; tail -2 $o/doctor.txt
$new collectives -b 8 -e 64M -f 8 -n 20 -w 2 --json /tmp/coll.json > /tmp/coll.txt 2>&1; echo "collectives rc=$?"; grep "NCCL's account" -A2 /tmp/coll.txt; tail -1 /tmp/coll.txt
$new accept --json /tmp/accept.json > /tmp/accept.txt 2>&1; echo "accept rc=$?"; grep "NCCL's account" -A3 /tmp/accept.txt; tail -1 /tmp/accept.txt
NCCL_DEBUG_FILE=/tmp/user.%p.log $new collectives -b 1M -e 1M -n 5 --json /tmp/user.json > /tmp/user.txt 2>&1; echo "user file rc=$?"; grep "NCCL's account" -A1 /tmp/user.txt; ls /tmp/user.*.log
python3 -c "import json; n=json.load(open('/tmp/user.json'))['nccl']; print('user file: source', n['source'], 'reported', n['reported'])"
ls /tmp/ddpbench-nccl-* 2>/dev/null && echo "LEFT BEHIND: private dirs" || echo "no private NCCL log left in /tmp"
for i in 1 2; do
  $new collectives -b 1M -e 64M -f 4 -n 20 --json /tmp/cmp-a$i.json --quiet >/dev/null 2>&1
  LD_LIBRARY_PATH=$DDPBENCH_ALT_NCCL_DIR:$LD_LIBRARY_PATH $new collectives -b 1M -e 64M -f 4 -n 20 --json /tmp/cmp-b$i.json --quiet >/dev/null 2>&1
done
$new compare /tmp/cmp-a1.json /tmp/cmp-a2.json -- /tmp/cmp-b1.json /tmp/cmp-b2.json > $o/compare-2.28.3-vs-2.28.9.txt 2>&1; echo "compare rc=$?"
grep -A6 "NCCL's account" $o/compare-2.28.3-vs-2.28.9.txt
python3 - <<'PY' > $o/nccl-sections.txt 2>&1
import json
for f in ["/tmp/coll.json", "/tmp/accept.json", "/tmp/user.json", "/tmp/cmp-b1.json"]:
    d = json.load(open(f)); n = d.get("nccl")
    print(f, d["kind"], d["verdict"], json.dumps(n)[:1500])
    print("  nccl findings:", [x["text"][:160] for x in d["findings"] if x.get("check") == "nccl"])
PY
cp /tmp/coll.txt $o/collectives.txt; cp /tmp/accept.txt $o/accept.txt
python3 -c "
import json, jsonschema
s = json.load(open('docs/result.schema.json'))
for f in ['$o/doctor.json', '/tmp/coll.json', '/tmp/accept.json', '/tmp/user.json']:
    errs = list(jsonschema.Draft202012Validator(s).iter_errors(json.load(open(f)))); print('schema', f, len(errs), [e.message[:120] for e in errs[:3]])
" 2>&1 | tail -5
cd /tmp/bld-new && ctest -L gpu --output-on-failure > $o/ctest-gpu.txt 2>&1; echo "ctest -L gpu rc=$?"; grep -hE 'Test +#|tests passed' $o/ctest-gpu.txt
./tests/gpu/test_nccl_prof_gpu 2>&1 | tail -8
echo done
