#!/usr/bin/env bash
# test_slow_host.sh: three emulated hosts, host 2's link shaped to 100 Mbit/s with tbf (both directions).
# Asserts: the run still finishes, bounded by --timeout, exit 0 and weights identical; the comm phase's
# figures show the shaped link (at least the time the allreduced bytes need at 100 Mbit/s, and several times
# the unshaped run's); the JSON holds what a per-host verdict needs (per rank: host, compute time and comm
# time, from which this test builds the per-host table); and ddpbench's own comm phase on each pair of hosts
# names host 2 as the one every slow pair shares, the other pair being fast.
# What a single all-host run cannot do: in a blocking allreduce every rank waits for the slowest link, so
# every rank's comm time is the same; only runs on subsets of the hosts (pairs) tell which host is slow.
# Exits 77 with the reason when the machine refuses namespaces.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 200 "$@"
mn_init
mn_hosts_up 3 1 || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR" || exit 1
h1=${MN_HOSTS[0]} h2=${MN_HOSTS[1]} h3=${MN_HOSTS[2]}
# 3 layers of 512 x 512 fp32: 3 MiB allreduced per step, in three 1 MiB buckets.
args=(-x OPENBLAS_NUM_THREADS=1 -x OMPI_MCA_mpi_yield_when_idle=1 "$MN_BIN" --config "$MN_SRC/configs/ci.ini"
  --hidden 512 --bucket-mb 1 --first-bucket-mb 1 --progress none --straggler-pct 1000)

mn_mpirun 120 -np 3 "${args[@]}" --phases comm --json base.json >base.txt 2>base.err
mn_eq "unshaped run exits 0" "$?" 0
base_ms=$(jq .phases.comm.step_ms.median base.json)

mn_shape "$h2" 100mbit
SECONDS=0
mn_mpirun 150 -np 3 "${args[@]}" --timeout 60 --json slow.json >slow.txt 2>slow.err
rc=$?
mn_eq "shaped run exits 0 within its --timeout (${SECONDS}s)" "$rc" 0
[ -s slow.json ] || { cat slow.txt slow.err; mn_done; exit 1; }
mn_eq "shaped run: weights identical" "$(jq .weights_identical slow.json)" true
slow_ms=$(jq .phases.comm.step_ms.median slow.json)
bytes=$(jq .allreduce_bytes_per_step slow.json)
# A ring allreduce moves 2(n-1)/n of the bytes through each link; 100 Mbit/s = 12.5e6 B/s; 10 % slack for
# the token bucket's burst.
floor_ms=$(jq -n "$bytes * 2 * 2 / 3 / 12.5e6 * 1000 * 0.9")
mn_check "comm step ${slow_ms} ms >= the link's floor ${floor_ms} ms" jq -e -n "$slow_ms >= $floor_ms"
mn_check "comm step ${slow_ms} ms >= 3 x unshaped ${base_ms} ms" jq -e -n "$slow_ms >= 3 * $base_ms"

# The per-host table a verdict needs, from the per-rank data (the JSON has no per-host aggregate yet).
table=$(jq -r '
  (.ranks | map({(.rank | tostring): .host}) | add) as $host
  | [.phases | to_entries[] | .key as $p | .value.per_rank[]
     | {host: $host[.rank | tostring], phase: $p, step: .step_ms.median, compute: (.compute_ms.median // null)}]
  | group_by(.host)[]
  | "\(.[0].host)  " + (map("\(.phase): step \(.step * 1000 | round / 1000) ms" +
      (if .compute then " compute \(.compute * 1000 | round / 1000) ms" else "" end)) | join("  "))' slow.json)
echo "$table" | sed 's/^/#   /'
mn_eq "per-host table: one line per host" "$(echo "$table" | wc -l)" 3
mn_eq "per rank: compute time in local and ddp, comm time in comm" \
  "$(jq -c '[.phases.local.per_rank[0].compute_ms.median, .phases.ddp.per_rank[0].compute_ms.median, .phases.comm.per_rank[0].step_ms.median] | map(type)' slow.json)" \
  '["number","number","number"]'

# Pairs: ddpbench's comm phase on two hosts at a time.
declare -A pair
for p in "$h1 $h2" "$h1 $h3" "$h2 $h3"; do
  set -- $p
  mn_mpirun 120 -np 2 -host "$1:1,$2:1" "${args[@]}" --phases comm --steps 3 --warmup 1 --json "pair-$1-$2.json" \
    >/dev/null 2>"pair-$1-$2.err"
  mn_eq "pair $1 $2 exits 0" "$?" 0
  pair["$1 $2"]=$(jq .phases.comm.step_ms.median "pair-$1-$2.json")
  echo "#   pair $1 $2: comm step ${pair["$1 $2"]} ms"
done
fast=${pair["$h1 $h3"]}
mn_check "pair $h1 $h2 is slow (> 3 x the fast pair)" jq -e -n "${pair["$h1 $h2"]} > 3 * $fast"
mn_check "pair $h2 $h3 is slow (> 3 x the fast pair)" jq -e -n "${pair["$h2 $h3"]} > 3 * $fast"
# The host every slow pair shares, and no fast pair has.
named=""
for h in "$h1" "$h2" "$h3"; do
  all=1
  for k in "${!pair[@]}"; do
    slow=$(jq -n "${pair[$k]} > 3 * $fast")
    case " $k " in *" $h "*) [ "$slow" = true ] || all=0 ;; *) [ "$slow" = false ] || all=0 ;; esac
  done
  [ $all = 1 ] && named+="$h "
done
mn_eq "the slow host named from the pairs" "$named" "$h2 "
mn_done
