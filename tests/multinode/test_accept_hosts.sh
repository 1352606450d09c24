#!/usr/bin/env bash
# test_accept_hosts.sh MODE: `ddpbench accept` on four emulated hosts (one rank each, CPU device), its node-pair
# allreduce in rounds (tournament: 3 rounds of 2 disjoint pairs) against a link made slow with tc.
#   host: host 2's link shaped to 20 Mbit/s with tbf (both directions). Asserts: a run before the shaping passes
#         (exit 0, nobody named, empty failed-hosts); the shaped run names host 2 as failing (pair_busbw, scope
#         host), no other host, and no pair alone; --failed-hosts lists exactly host 2; exit 4 (with per-pass
#         records: has_passes; with one figure per pair host 2 goes to --retest-hosts, nobody drained, exit 0). Baseline mode
#         against the good run's JSON: a second unshaped run passes (exit 0); the shaped run fails (exit 4) and
#         its failed-hosts file lists exactly host 2.
#   three: the pair verdicts on three hosts, host 2's link shaped: with --baseline both of its pairs fail and the third
#         passes, so host 2 is the culprit: named as a failing host, the only line of --failed-hosts, exit 4,
#         hosts line "2 pass, 0 warn, 1 fail"; without a baseline the pair model drains host 2 or says "cannot
#         tell" (nobody else drained); then
#         only the path between hosts 1 and 2 shaped: with --baseline that pair fails, no host, an empty drain list.
#   pair: only the traffic between hosts 1 and 2 shaped (htb class per destination, mn_shape_pair). Asserts:
#         the pair 1<->2 is named (scope pair), neither host fails, failed-hosts is empty, exit 4 (with per-pass
#         records; with one figure per pair: "cannot tell", exit 0).
#   confirm: the pairs' confirmation pass on six hosts with --pairs ring (each node with its two neighbours),
#         hosts 2 and 4 shaped: all four pairs of hosts 2, 3 and 4 fail, so the healthy host 3 between them looks
#         like a culprit too. With --baseline, the pass pairs host 3 with a node that passed; it passes, and only
#         hosts 2 and 4 are drained (exit 4), the confirmation pair printed and judged against the baseline.
#   many N: the pair verdicts on N emulated hosts (8 and 16 in the full test command): unshaped, nobody named; host 3's
#         link shaped: host 3 named and nothing else (the only line of --failed-hosts, no pair alone); then only
#         the path between hosts 1 and 2 shaped: that pair named and nothing else (no host fails, an empty drain
#         list). All with the pair model (no baseline).
#   flap: three hosts, host 2's link down 2 s of every 3.5 s from the first pair pass on: never a silent pass
#         (host 2 drained, retested, "cannot tell" or its slow passes warned; nobody else drained), every pass's
#         duration in the JSON.
# Exits 77 with the reason when the machine refuses namespaces or the shaping.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mode=${1:-host}
if [ "$mode" = many ]; then mn_bound 900 "$@"; else mn_bound 170 "$@"; fi
mn_init
nhosts=4
[ "$mode" = three ] && nhosts=3
[ "$mode" = flap ] && nhosts=3 acc_limit=150
[ "$mode" = confirm ] && nhosts=6 acc_limit=200
[ "$mode" = many ] && nhosts=${2:-8} acc_limit=300
mn_hosts_up $nhosts 1 || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR" || exit 1
h1=${MN_HOSTS[0]} h2=${MN_HOSTS[1]}
# Only the collectives (the GEMM of 4 ranks on 2 cores is the straggler tests' business); 1 MiB per pair, 3 timed
# allreduces, 3 passes (a pair keeps its best): about 0.4 s per allreduce through a 20 Mbit/s link.
# Thresholds: on this shared 2-core machine a healthy veth pair measured 0.2 to 0.9 GB/s from run to run (4 MiB,
# 2 passes), and one pair 15 % below the others with a small MAD was named once at the default 10 %. With three
# healthy pairs the noise estimate is itself noisy: at 100 Mbit/s (50 x slower) host 2 went unnamed once in ~8
# runs (z 3.2), hence 20 Mbit/s (0.0012 GB/s, 99.6 % below) and best of 3 passes; a healthy pair was once 53 %
# below the others' median at 1 MiB, and another 86 % below while two fuzzers ran beside the test at nice 19.
# The relative limit is 95 % (fail; 90 % warn) and the baseline tolerance 90 %: both beyond the healthy noise
# here and far from the fault (99.8 % below). A real fabric needs neither (the defaults).
acc=(-x OPENBLAS_NUM_THREADS=1 -x OMPI_MCA_mpi_yield_when_idle=1 "$MN_BIN" accept --device cpu
  --skip gemm,copy,p2p,node --pair-mib 1 --allreduce-iters 3 --pair-repeats 3 --relative-fail-pct 95
  --relative-warn-pct 90)

# accept_run NAME ARGS...: runs accept, leaves NAME.txt, NAME.err, NAME.rc
accept_run() {
  local name=$1
  shift
  mn_mpirun "${acc_limit:-60}" -np $nhosts "${acc[@]}" "$@" >"$name.txt" 2>"$name.err"
  echo $? >"$name.rc"
  sed -n '/^# allreduce over node pairs/,/^# findings/p; /^# hosts/,$p' "$name.txt" | sed 's/^/#   /'
}
failing_hosts() { grep -E '^\S+: fail pair_busbw \S+ \(its pairs\)' "$1" | cut -d: -f1 | sort -u | paste -sd' '; }
unshape() { # the tbf of mn_shape on host $1's link, both ends
  ip netns exec "$1" tc qdisc del dev "$MN_PREFIX" root 2>/dev/null
  ip netns exec "${MN_PREFIX}sw" tc qdisc del dev "${MN_PREFIX}b${1##*n}" root 2>/dev/null
}
# The pair model drains from repeated iterations (per-pass records, "pair_pass"); with one figure per pair it
# cannot state an error rate, so it drains nothing: the node goes to --retest-hosts, a path is a warning.
has_passes() { [ "$(jq '[.records[] | select(.measurement == "pair_pass")] | length' "$1")" -gt 0 ]; }
failing_pairs() { grep -E '^pair: fail pair_busbw \S+<->\S+: ' "$1" | awk '{sub(/:$/, "", $4); print $4}' | paste -sd' '; }

if [ "$mode" = three ]; then
  accept_run good --json good.json --failed-hosts good.hosts
  mn_eq "3 hosts unshaped: exit 0" "$(cat good.rc)" 0
  mn_shape "$h2" 20mbit
  accept_run slowb --baseline good.json --tolerance-pct 90 --failed-hosts slowb.hosts
  mn_eq "3 hosts, baseline, host 2 slowed: exit 4" "$(cat slowb.rc)" 4
  mn_eq "baseline: host 2's two pairs below the floor, counted against host 2" \
    "$(grep -cE "^$h2: fail pair_busbw.abs \S+<->\S+ .*baseline" slowb.txt)" 2
  mn_eq "baseline: host 2 is the culprit host" "$(grep -E '^\S+: fail pair_busbw.abs \S+ \(all its pairs\)' slowb.txt | cut -d: -f1 | sort -u | paste -sd' ')" "$h2"
  mn_eq "baseline: failed-hosts lists exactly host 2" "$(paste -sd' ' slowb.hosts)" "$h2"
  mn_eq "baseline: hosts line" "$(grep -c '^hosts: 2 pass, 0 warn, 1 fail' slowb.txt)" 1
  accept_run slow --failed-hosts slow.hosts --retest-hosts slow.retest
  mn_check "--retest-hosts written (the grey zone, maybe empty)" test -f slow.retest
  mn_eq "--retest-hosts: only hosts of the job, none drained" \
    "$(grep -vxF -e "${MN_HOSTS[0]}" -e "${MN_HOSTS[1]}" -e "${MN_HOSTS[2]}" slow.retest; grep -xFf slow.hosts slow.retest)" ""
  # the pair model on 3 nodes, one figure a pair (no repeats): host 2 drained, in the grey zone (a warning and
  # --retest-hosts), or "cannot tell" said; never a silent pass
  mn_eq "no baseline: host 2 drained, retested, or 'cannot tell' said" \
    "$( { [ "$(failing_hosts slow.txt)" = "$h2" ] || [ "$(paste -sd' ' slow.retest)" = "$h2" ] ||
      grep -q 'cannot tell: every pair at one level' slow.txt; } && echo yes)" yes
  mn_eq "no baseline: failed-hosts holds host 2 or nobody" "$(paste -sd' ' slow.hosts | sed "s/^$h2\$//")" ""
  unshape "$h2"
  mn_shape_pair "$h1" "$h2" 20mbit 2>shape.err || mn_skip "$(cat shape.err)"
  accept_run pathb --baseline good.json --tolerance-pct 90 --failed-hosts pathb.hosts
  mn_eq "3 hosts, baseline, the path 1-2 slowed: exit 4" "$(cat pathb.rc)" 4
  mn_eq "baseline: the path's pair fails" "$(grep -cE "fail pair_busbw.abs $h1<->$h2: " pathb.txt)" 1
  mn_eq "baseline, path: no host fails" "$(grep -E '^\S+: fail ' pathb.txt | grep -vc "<->")" 0
  mn_eq "baseline, path: failed-hosts empty" "$(paste -sd' ' pathb.hosts 2>/dev/null)" ""
  mn_eq "baseline, path: the bottom line says there is no culprit host" "$(grep -c 'no culprit host' pathb.txt)" 1
  mn_done
  exit
fi

if [ "$mode" = confirm ]; then
  h3=${MN_HOSTS[2]} h4=${MN_HOSTS[3]}
  accept_run good --pairs ring --json good.json --failed-hosts good.hosts
  mn_eq "6 hosts, ring, unshaped: exit 0" "$(cat good.rc)" 0
  mn_eq "unshaped: nothing to confirm" "$(grep -c '^# confirmation pairs' good.txt)" 0
  mn_shape "$h2" 20mbit
  mn_shape "$h4" 20mbit
  accept_run slowb --pairs ring --baseline good.json --tolerance-pct 90 --json slowb.json --failed-hosts slowb.hosts
  mn_eq "ring, hosts 2 and 4 slowed: exit 4" "$(cat slowb.rc)" 4
  mn_eq "a confirmation pair for host 3, with a node that passed" \
    "$(grep -cE "^ confirm +(\S+ - $h3|$h3 - \S+): " slowb.txt)" 1
  mn_eq "the confirmation pair judged against the baseline's pair median, and passed (JSON)" \
    "$(jq '[.findings[] | select(.passed and (.text | test("baseline.s pair median")))] | length' slowb.json)" 1
  mn_eq "failed-hosts lists exactly hosts 2 and 4" "$(sort slowb.hosts | paste -sd' ')" "$(printf '%s\n' "$h2" "$h4" | sort | paste -sd' ')"
  mn_eq "host 3 not failing" "$(grep -cE "^$h3: fail " slowb.txt)" 0
  mn_eq "JSON: seven pair records (six of the ring, one confirmation)" \
    "$(jq '[.records[] | select(.measurement == "allreduce" and (.group | startswith("pair:")))] | length' slowb.json)" 7
  # every pass is kept, the confirmation's too: its pair's busbw (every iteration) and its duration, stage "confirm"
  mn_eq "JSON: the confirmation pass kept as pair_pass records (its pair's busbw, its duration)" \
    "$(jq -r '[.records[] | select(.measurement == "pair_pass" and .labels.stage == "confirm") | .metric] | unique |
      join(" ")' slowb.json)" "busbw_gbs duration_s"
  mn_done
  exit
fi

if [ "$mode" = flap ]; then
  # host 2's link flaps once the first pair pass starts: down 2 s of every 3.5 s, until accept ends (at most
  # 40 flaps). A pair keeps its best pass, so the stalled iterations would hide it; every pass and every
  # iteration is kept, and the verdict must show it: host 2 drained or retested, a 'cannot tell', or the slow
  # passes warned by number; never a silent pass, and nobody else drained.
  accept_run flap --failed-hosts flap.hosts --retest-hosts flap.retest --json flap.json &
  run=$!
  flaps=0
  for _ in $(seq 600); do grep -q 'node-pair allreduces, pass 1' flap.err 2>/dev/null && break; sleep 0.1; done
  while kill -0 "$run" 2>/dev/null && [ $flaps -lt "${MN_FLAPS:-40}" ]; do # MN_FLAPS=0: the test must fail
    ip -n "$h2" link set "$MN_PREFIX" down && sleep 2
    ip -n "$h2" link set "$MN_PREFIX" up && sleep 1.5
    flaps=$((flaps + 1))
  done
  ip -n "$h2" link set "$MN_PREFIX" up
  wait "$run"
  echo "#   flapped $flaps times; $(grep -h '^ddpbench accept:' flap.txt)"
  jq -r '[.records[] | select(.measurement == "pair_pass" and .metric == "duration_s") | .value * 10 | round / 10]
    | "#   pass durations (s): \(join(" "))"' flap.json 2>/dev/null
  mn_eq "flapping: the link flapped while the pairs ran" "$([ $flaps -ge 1 ] && echo yes)" yes
  mn_eq "flapping: never a silent pass" "$(grep -c '^ddpbench accept: PASS' flap.txt)" 0
  # (not 'cannot tell' alone: three healthy hosts without a baseline say that too)
  mn_eq "flapping: host 2 drained or retested, or its slow passes warned by number" \
    "$( { [ "$(failing_hosts flap.txt)" = "$h2" ] || [ "$(paste -sd' ' flap.retest)" = "$h2" ] ||
      grep -qE '^job: warn pair_passes job: pair pass [0-9]+ took' flap.txt; } && echo yes)" yes
  mn_eq "flapping: failed-hosts holds host 2 or nobody" "$(paste -sd' ' flap.hosts | sed "s/^$h2\$//")" ""
  mn_eq "flapping: every pass's duration in the JSON (3 passes at least)" \
    "$(jq '[.records[] | select(.measurement == "pair_pass" and .metric == "duration_s")] | length >= 3' flap.json)" true
  mn_done
  exit
fi

if [ "$mode" = many ]; then
  h3=${MN_HOSTS[2]}
  accept_run good --failed-hosts good.hosts
  mn_eq "$nhosts hosts unshaped: exit 0" "$(cat good.rc)" 0
  mn_eq "$nhosts hosts unshaped: nobody named" "$(failing_hosts good.txt)$(failing_pairs good.txt)" ""
  mn_shape "$h3" 20mbit
  accept_run slow --failed-hosts slow.hosts --retest-hosts slow.retest --json slow.json
  if has_passes slow.json; then
    mn_eq "$nhosts hosts, host 3 slowed: exit 4" "$(cat slow.rc)" 4
    mn_eq "$nhosts hosts: host 3 named as failing, nothing else" "$(failing_hosts slow.txt)" "$h3"
    mn_eq "$nhosts hosts: failed-hosts lists exactly host 3" "$(paste -sd' ' slow.hosts)" "$h3"
    mn_eq "$nhosts hosts: hosts line" "$(grep -c "^hosts: $((nhosts - 1)) pass, 0 warn, 1 fail" slow.txt)" 1
    mn_eq "$nhosts hosts: the bottom line states the drain list's error rate" \
      "$(grep -cE '^ddpbench accept: FAIL .*  pairs: expected false drains [0-9.]+, misses [0-9.]+  \(' slow.txt)" 1
  else
    echo "# no per-pass records in the result: one figure per pair"
    mn_eq "$nhosts hosts, host 3 slowed, one figure per pair: exit 0" "$(cat slow.rc)" 0
    mn_eq "$nhosts hosts, one figure per pair: host 3 retested, nobody drained" \
      "$(paste -sd' ' slow.retest)|$(paste -sd' ' slow.hosts)" "$h3|"
  fi
  mn_eq "$nhosts hosts: no pair named alone" "$(failing_pairs slow.txt)" ""
  unshape "$h3"
  mn_shape_pair "$h1" "$h2" 20mbit 2>shape.err || mn_skip "$(cat shape.err)"
  accept_run path --failed-hosts path.hosts --json path.json
  if has_passes path.json; then
    mn_eq "$nhosts hosts, path 1-2 slowed: exit 4" "$(cat path.rc)" 4
    mn_eq "$nhosts hosts: the path is named, nothing else" "$(failing_pairs path.txt)" "$h1<->$h2"
  else
    mn_eq "$nhosts hosts, path 1-2 slowed, one figure per pair: exit 0" "$(cat path.rc)" 0
    mn_eq "$nhosts hosts, one figure per pair: the path warned or 'cannot tell'" \
      "$(grep -cE "warn pair_busbw (job: cannot tell|$h1<->$h2: )" path.txt)" 1
  fi
  mn_eq "$nhosts hosts: no host fails on the path" "$(failing_hosts path.txt)" ""
  mn_eq "$nhosts hosts: failed-hosts empty" "$(paste -sd' ' path.hosts 2>/dev/null)" ""
  mn_eq "$nhosts hosts: no suspect named" "$(grep -c 'pair_suspect' path.txt)" 0
  mn_done
  exit
fi

if [ "$mode" = pair ]; then
  mn_shape_pair "$h1" "$h2" 20mbit 2>shape.err || mn_skip "$(cat shape.err)"
  accept_run slow --failed-hosts slow.hosts --json slow.json
  # The pair model names a path from its repeated iterations (per-pass records, "pair_pass"). With one figure per
  # pair a single slow figure is also one hiccup, and the model says "cannot tell" (a warning, exit 0), never pass.
  if has_passes slow.json; then
    mn_eq "pair (1,2) slowed: exit 4" "$(cat slow.rc)" 4
    mn_eq "the pair is named" "$(failing_pairs slow.txt)" "$h1<->$h2"
  else
    echo "# no per-pass records in the result: one figure per pair"
    mn_eq "pair (1,2) slowed, one figure per pair: exit 0 (a warning)" "$(cat slow.rc)" 0
    mn_eq "one figure per pair: 'cannot tell' said, or the path warned" \
      "$(grep -cE "warn pair_busbw (job: cannot tell|$h1<->$h2: )" slow.txt)" 1
  fi
  mn_eq "no host fails on the pair check" "$(failing_hosts slow.txt)" ""
  mn_eq "hosts summary: none failing" "$(grep -c '^hosts: 4 pass, 0 warn, 0 fail' slow.txt)" 1
  mn_check "failed-hosts file written" test -f slow.hosts
  mn_eq "failed-hosts file empty" "$(paste -sd' ' slow.hosts 2>/dev/null)" ""
  mn_done
  exit
fi

accept_run good --json good.json --failed-hosts good.hosts
mn_eq "unshaped: exit 0" "$(cat good.rc)" 0
mn_eq "unshaped: nobody named" "$(failing_hosts good.txt)$(failing_pairs good.txt)" ""
mn_eq "unshaped: failed-hosts empty" "$(paste -sd' ' good.hosts)" ""
mn_eq "JSON: one pair_busbw record per pair" \
  "$(jq '[.records[] | select(.measurement == "allreduce" and (.group | startswith("pair:")))] | length' good.json)" 6
accept_run good2 --baseline good.json --tolerance-pct 90
mn_eq "baseline, unshaped again: exit 0" "$(cat good2.rc)" 0

mn_shape "$h2" 20mbit
accept_run slow --failed-hosts slow.hosts --retest-hosts slow.retest --json slow.json
if has_passes slow.json; then
  mn_eq "host 2 slowed: exit 4" "$(cat slow.rc)" 4
  mn_eq "host 2 named as failing, not its partners" "$(failing_hosts slow.txt)" "$h2"
  mn_eq "failed-hosts lists exactly host 2" "$(paste -sd' ' slow.hosts)" "$h2"
else
  echo "# no per-pass records in the result: one figure per pair"
  mn_eq "host 2 slowed, one figure per pair: exit 0 (a warning)" "$(cat slow.rc)" 0
  mn_eq "one figure per pair: host 2 retested, nobody drained" "$(paste -sd' ' slow.retest)|$(paste -sd' ' slow.hosts)" "$h2|"
fi
mn_eq "no pair named alone" "$(failing_pairs slow.txt)" ""
accept_run slowb --baseline good.json --tolerance-pct 90 --failed-hosts slowb.hosts
mn_eq "baseline, host 2 slowed: exit 4" "$(cat slowb.rc)" 4
mn_eq "baseline: its three pairs below the baseline floor, counted against host 2" \
  "$(grep -cE "^$h2: fail pair_busbw.abs \S+<->\S+ .*baseline" slowb.txt)" 3
mn_eq "baseline: failed-hosts lists exactly host 2" "$(paste -sd' ' slowb.hosts)" "$h2"
mn_done
