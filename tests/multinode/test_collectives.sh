#!/usr/bin/env bash
# test_collectives.sh: `ddpbench collectives` across 2 emulated hosts (lib.sh), 2 ranks each, through mpirun
# over TCP between the hosts. Asserts: every collective (all ten) exact across hosts (#wrong 0 in the table and in the
# result file, which names 2 nodes and both hosts); --group node gives one group per host, named by its
# hostname; --group pairs runs the one pair of hosts; a corrupted element on the second host's last rank is
# caught, exit 1, and the finding names that rank and that host.
# Exits 77 with the reason when the machine refuses namespaces.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 200 "$@"
N=2
R=2
W=$((N * R))
mn_init
mn_hosts_up "$N" "$R" || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR"
h1=${MN_HOSTS[0]}
h2=${MN_HOSTS[1]}
common=(-x OPENBLAS_NUM_THREADS=1 "$MN_BIN" collectives --device cpu -T 60) # CPU device and MPI: the GPU part is test_gpu's

# --- every collective, across the two hosts ---------------------------------------------------------------
mn_mpirun 120 -np "$W" "${common[@]}" all -b 8 -e 64K -f 8 -n 3 -J all.json >all.txt 2>all.err
mn_eq "collectives across $N hosts exit 0" "$?" 0
[ -s all.json ] || { cat all.txt all.err; echo "$MN_PASS passed, $((MN_FAIL + 1)) failed"; exit 1; }
mn_eq "text: 10 tables" "$(grep -c '^# Avg bus bandwidth' all.txt)" 10
mn_eq "text: #wrong 0 in every row" "$(grep -v '^#' all.txt | awk '$9 != "0" || ($13 != "0" && $13 != "N/A")' | wc -l)" 0
mn_eq "text: rows (10 collectives x 5 sizes)" "$(grep -vc '^#' all.txt)" 50
mn_eq "json: nodes" "$(jq .nodes all.json)" "$N"
mn_eq "json: both hosts" "$(jq -r '[.ranks[].host] | unique | join(",")' all.json)" "$h1,$h2"
mn_eq "json: nwrong 0 everywhere" "$(jq '[.records[] | select(.metric == "nwrong") | .value] | unique | tostring' all.json)" '"[0]"'
mn_eq "json: no findings" "$(jq '.findings | length' all.json)" 0
ratio() { # busbw / algbw of collective $1, x 1000, over its rows and placements
  jq "[.records[] | select(.labels.collective == \"$1\" and .labels.count != \"0\" and (.metric == \"busbw_gbs\" or .metric == \"algbw_gbs\"))]
      | group_by(.labels | tostring) | map((map(select(.metric == \"busbw_gbs\"))[0].value)
      / (map(select(.metric == \"algbw_gbs\"))[0].value) * 1000 | round) | unique | tostring" all.json
}
mn_eq "json: allreduce busbw = algbw x 2(n-1)/n on $W ranks" "$(ratio allreduce)" '"[1500]"'
mn_eq "json: all_gather busbw = algbw x (n-1)/n" "$(ratio all_gather)" '"[750]"'
mn_eq "json: broadcast busbw = algbw" "$(ratio broadcast)" '"[1000]"'
mn_eq "json: reduce, sendrecv busbw = algbw" "$(ratio reduce)$(ratio sendrecv)" '"[1000]""[1000]"'
mn_eq "json: gather, scatter, alltoallv busbw = algbw x (n-1)/n" "$(ratio gather)$(ratio scatter)$(ratio alltoallv)" \
  '"[750]""[750]""[750]"'

# --- per-node groups: one per host, named by its hostname ------------------------------------------------
mn_mpirun 120 -np "$W" "${common[@]}" allreduce -b 1K -e 4K -f 4 -n 3 --group node -J node.json >node.txt 2>node.err
mn_eq "--group node exits 0" "$?" 0
mn_eq "text: a table per host" "$(grep -c "^# Group: node:$h1, 2 ranks (mpi): 0@$h1 1@$h1\|^# Group: node:$h2, 2 ranks (mpi): 2@$h2 3@$h2" node.txt)" 2
mn_eq "json: groups named by host" "$(jq -r '[.records[].group] | unique | join(",")' node.json)" "node:$h1,node:$h2"

# --- node pairs with a corrupted element on rank 3 (second host) ------------------------------------------
mn_mpirun 120 -np "$W" -x DDPBENCH_TEST_CORRUPT_COLLECTIVE=3:7 "${common[@]}" -b 1K -e 1K -n 3 --group pairs \
  -J pairs.json >pairs.txt 2>pairs.err
mn_eq "corrupted: exit 1" "$?" 1
mn_eq "json: the one pair" "$(jq -r '[.records[].group] | unique | join(",")' pairs.json)" "pair:0-1"
mn_eq "json: findings name rank 3 on $h2" \
  "$(jq -r '[.findings[] | "\(.check) \(.subject)"] | unique | join(",")' pairs.json)" "collectives_data rank 3 ($h2)"
mn_eq "text: element named" "$(grep -c "# wrong data: rank 3 host $h2, out-of-place: 1 wrong element(s) of 256 received; first at element 7" pairs.txt)" 1
mn_done
