#!/usr/bin/env bash
# test_sweep_hosts.sh: the scaling sweep (--sweep) across 2 emulated hosts (lib.sh) with 2 ranks each, through
# mpirun as on a cluster. Asserts what only real hosts can show: the sizes 1, 2 (one node) and 4 (2 nodes),
# each group's ranks, hosts and node count, efficiency = step(first:1) / step(first:k) per group, the per-rank
# steps on the ranks and hosts that formed the group, the finding naming the right side of the node boundary,
# the table, --csv (one row per record) and --prom (promtool, the efficiencies equal the JSON's); and, with
# round-robin placement (--map-by node), first:2 taken in node order: ranks 0 and 2, both on the first host.
# Exits 77 with the reason when the machine refuses namespaces.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 240 "$@"
mn_init
mn_hosts_up 2 2 || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR" || exit 1
h1=${MN_HOSTS[0]}
h2=${MN_HOSTS[1]}
# --device cpu: a run across hosts must not guess its device; --straggler-pct 1000: the 4 ranks share 2 cores,
# so one of them is really slower now and then (the straggler rule has tests of its own).
common=(-x OPENBLAS_NUM_THREADS=1 "$MN_BIN" --config "$MN_SRC/configs/ci.ini" --device cpu --straggler-pct 1000
  --progress none --timeout 90 --sweep)

# --- block placement: ranks 0-1 on host 1, 2-3 on host 2 --------------------------------------------------
mn_mpirun 150 -np 4 "${common[@]}" --json s.json --csv s.csv --prom s.prom >s.txt 2>s.err
mn_eq "mpirun --sweep across 2 hosts exits 0" "$?" 0
[ -s s.json ] || { cat s.txt s.err; echo "$MN_PASS passed, $((MN_FAIL + 1)) failed"; exit 1; }
sc='.records[] | select(.measurement == "scaling")'
val() { jq -r --arg g "$2" --arg m "$3" "$sc"' | select(.group == $g and .metric == $m) | .value' "$1"; }
mn_eq "json: nodes" "$(jq .nodes s.json)" 2
mn_eq "groups in order" "$(jq -r "[$sc | select(.metric == \"gpus\") | .group] | join(\" \")" s.json)" "first:1 first:2 first:4"
mn_eq "gpus per group" "$(jq -r "[$sc | select(.metric == \"gpus\") | .value] | map(tostring) | join(\" \")" s.json)" "1 2 4"
mn_eq "nodes per group (the boundary is between 2 and 4)" \
  "$(jq -r "[$sc | select(.metric == \"nodes\") | .value] | map(tostring) | join(\" \")" s.json)" "1 1 2"
mn_eq "ranks per group" "$(jq -r "[$sc | select(.metric == \"gpus\") | .labels.ranks] | join(\" \")" s.json)" "0 0-1 0-3"
mn_eq "hosts per group" "$(jq -r "[$sc | select(.metric == \"gpus\") | .labels.hosts] | join(\" \")" s.json)" \
  "$h1 $h1 $h1,$h2"
mn_eq "per-rank steps of first:4 on their own hosts" \
  "$(jq -r "[$sc | select(.group == \"first:4\" and .metric == \"rank_step_ms\") | \"\(.labels.rank)@\(.labels.host)\"] | join(\" \")" s.json)" \
  "0@$h1 1@$h1 2@$h2 3@$h2"
mn_eq "per-rank steps of first:2 only on host 1" \
  "$(jq -r "[$sc | select(.group == \"first:2\" and .metric == \"rank_step_ms\") | \"\(.labels.rank)@\(.labels.host)\"] | join(\" \")" s.json)" \
  "0@$h1 1@$h1"
# Efficiency is derived exactly from the recorded steps (weak scaling against the 1-rank step).
s1=$(val s.json first:1 step_ms)
why() { jq -r --arg g "$2" --arg m "$3" "$sc"' | select(.group == $g and .metric == $m) | .why // ""' "$1"; }
for k in 1 2 4; do
  # (above 100 % beyond the step times' noise the sweep cannot tell: null, with the reason)
  mn_eq "efficiency first:$k = step(first:1) / step(first:$k)" \
    "$(jq -n --argjson a "$s1" --argjson b "$(val s.json first:$k step_ms)" --argjson e "$(val s.json first:$k efficiency)" \
      --arg w "$(why s.json first:$k efficiency)" \
      'if $e == null then ($w | test("cannot tell")) and ($a > $b) else (($a / $b) - $e) | fabs < 1e-12 end')" true
  mn_check "step_ms of first:$k > 0" jq -e --arg g "first:$k" "[$sc | select(.group == \$g and .metric == \"step_ms\") | .value > 0] | all" s.json
done
mn_eq "busbw none on one rank (no data moves; the reason given), > 0 across the 2 hosts" \
  "$(jq -n --argjson a "$(val s.json first:1 busbw_gbs)" --argjson b "$(val s.json first:4 busbw_gbs)" \
     --arg w "$(why s.json first:1 busbw_gbs)" '$a == null and ($w | test("1 rank")) and $b > 0')" true
# The finding: the largest fall between consecutive sizes, and its side of the node boundary, from the records.
e1=$(val s.json first:1 efficiency) e2=$(val s.json first:2 efficiency) e4=$(val s.json first:4 efficiency)
want=$(jq -nr --argjson a "$e1" --argjson b "$e2" --argjson c "$e4" '
  if ($a - $b) <= 0 and ($b - $c) <= 0 then "none"
  elif ($a - $b) >= ($b - $c) then "from 1 to 2 GPUs (inside one node)"
  else "from 2 to 4 GPUs (across nodes: the network)" end')
got=$(jq -r '[.findings[] | select(.check == "scaling") | .text] | if length == 0 then "none" else .[0] end' s.json)
if [ "$want" = none ]; then
  mn_eq "no fall in efficiency, no scaling finding" "$got" none
else
  mn_eq "finding: efficiency falls most $want" "$(case "$got" in *"falls most $want"*) echo yes ;; *) echo "$got" ;; esac)" yes
fi
mn_eq "table: one row per group, nodes 1 1 2" \
  "$(awk '/^# scaling sweep/{on=1; next} on && /^#/ {if (n) exit; next} on {printf "%s:%s ", $1, $2; n++}' s.txt)" "1:1 2:1 4:2 "
mn_eq "weights identical" "$(jq .weights_identical s.json)" true
mn_eq "csv: one row per scaling record" "$(grep -c '^scaling,' s.csv)" "$(jq "[$sc] | length" s.json)"
mn_eq "csv: first:4's per-rank rows name host 2" "$(grep -c "^scaling,first:4,rank_step_ms,.*,$h2," s.csv)" 2
for k in 1 2 4; do
  # a null figure has no sample (never NaN): the awk finds nothing, and jq reads null
  p=$(awk -v g="{kind=\"run\",group=\"first:$k\"}" '$1 == "ddpbench_scaling_efficiency" g {print $2}' s.prom)
  mn_eq "prom: ddpbench_scaling_efficiency{kind=\"run\",group=\"first:$k\"} equals the JSON's" \
    "$(jq -n --argjson a "${p:-null}" --argjson b "$(val s.json first:$k efficiency)" '$a == $b')" true
done
if command -v promtool >/dev/null; then
  promtool check metrics <s.prom >promtool.out 2>&1
  mn_eq "promtool check metrics accepts the textfile" "$?" 0
fi

# --- round-robin placement: ranks 0, 2 on host 1, ranks 1, 3 on host 2 ------------------------------------
mn_mpirun 150 -np 4 --map-by node "${common[@]}" --json rr.json >rr.txt 2>rr.err
mn_eq "mpirun --map-by node --sweep exits 0" "$?" 0
mn_eq "round robin: rank 1 on host 2" "$(jq -r '.ranks[] | select(.rank == 1) | .host' rr.json)" "$h2"
mn_eq "round robin: first:2 is ranks 0 and 2 (node order), on host 1, one node" \
  "$(jq -r "[$sc | select(.group == \"first:2\" and (.metric == \"gpus\" or .metric == \"nodes\"))] | \"\(.[0].labels.ranks) \(.[0].labels.hosts) \(.[1].value)\"" rr.json)" \
  "0,2 $h1 1"
mn_eq "round robin: first:4 spans both hosts" "$(val rr.json first:4 nodes)" 2
mn_done
