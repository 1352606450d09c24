#!/usr/bin/env bash
# test_hosts.sh HOSTS RANKS_PER_HOST: ddpbench across emulated hosts (lib.sh) through mpirun, as on a cluster.
# Asserts what must hold across hosts: hosts counted and named (text and JSON: nodes, per-host groups,
# signatures), node index and local rank per rank, results gathered from every rank, the per-host report,
# weights bitwise identical across hosts and equal to the same job on one host (the ddp phase over TCP gives
# the same numbers as over loopback), and a host whose configuration differs from the majority flagged: its
# NCCL_* environment (once from the host's own environment, once through mpirun -x on its ranks) and its
# hardware (the host's hwloc topology read from another machine's XML).
# Exits 77 with the reason when the machine refuses namespaces.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 200 "$@"
N=${1:-2}
R=${2:-1}
W=$((N * R))
mn_init
mn_hosts_up "$N" "$R" || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR" || exit 1
cfg=$MN_SRC/configs/ci.ini
# --straggler-pct 1000: these ranks share 2 cores, so one of them is really slower now and then; the straggler
# rule has tests of its own (test_straggler, test_accept)
common=(-x OPENBLAS_NUM_THREADS=1 "$MN_BIN" --config "$cfg" --device cpu --straggler-pct 1000 --progress none --timeout 60)
last=${MN_HOSTS[$((N - 1))]}

# --- a clean run -----------------------------------------------------------------------------------
mn_mpirun 120 -np "$W" "${common[@]}" --json clean.json >clean.txt 2>clean.err
mn_eq "mpirun across $N hosts exits 0" "$?" 0
[ -s clean.json ] || { cat clean.txt clean.err; echo "$MN_PASS passed, $((MN_FAIL + 1)) failed"; exit 1; }
mn_eq "text: world and nodes" "$(grep -o "world $W ($N nodes)" clean.txt)" "world $W ($N nodes)"
mn_eq "text: topology header" "$(grep -c "== topology: $W ranks on $N hosts ==" clean.txt)" 1
mn_eq "json: nodes" "$(jq .nodes clean.json)" "$N"
mn_eq "json: world_size" "$(jq .world_size clean.json)" "$W"
want_hosts=$(printf '%s\n' "${MN_HOSTS[@]}")
mn_eq "json: per-host groups, named by hostname, in rank order" "$(jq -r '.topology.hosts[].host' clean.json)" "$want_hosts"
# Open MPI fills each host's slots in hostfile order (--map-by slot): rank r is on host r / R, local rank r % R.
want=""
for r in $(seq 0 $((W - 1))); do want+="$r ${MN_HOSTS[$((r / R))]} $((r / R)) $((r % R))"$'\n'; done
mn_eq "json: host, node index and local rank of every rank" \
  "$(jq -r '.ranks[] | "\(.rank) \(.host) \(.node) \(.local_rank)"' clean.json)" "${want%$'\n'}"
mn_eq "json: local size per rank" "$(jq -r '[.topology.ranks[].local_size] | unique | map(tostring) | join(",")' clean.json)" "$R"
mn_eq "json: GPU choice per rank (CPU device: none, no GPU visible)" \
  "$(jq -r '[.topology.ranks[] | "\(.gpu_index)/\(.visible_gpus)"] | unique | join(",")' clean.json)" "-1/0"
mn_eq "json: every host in the majority, one signature" \
  "$(jq -r '[.topology.hosts[] | "\(.majority) \(.signature)"] | unique | length' clean.json)" 1
mn_eq "json: host ids differ per host" "$(jq -r '[.topology.hosts[].host_id] | unique | length' clean.json)" "$N"
for h in "${MN_HOSTS[@]}"; do
  mn_eq "text: per-host line for $h" "$(grep -cE "^#   $h#[0-9a-f]+ +ranks? " clean.txt)" 1
done
mn_eq "verdict consistent" "$(jq .topology.consistent clean.json)" true
# Results gathered: every phase has every rank's samples, and every rank's weights checksum is there.
mn_eq "json: per-rank results of every phase" \
  "$(jq -r '[.phases[] | (.per_rank | length), (.per_rank[].step_ms_samples | length)] | unique | map(tostring) | join(",")' clean.json)" \
  "$W,$(jq .phases.ddp.steps clean.json)"
mn_eq "json: all three phases" "$(jq -r '.phases | keys | join(",")' clean.json)" "comm,ddp,local"
mn_eq "json: per-rank results in rank order" "$(jq -c '[.phases.ddp.per_rank[].rank]' clean.json)" "$(jq -c '[range(0; .world_size)]' clean.json)"
mn_eq "weights identical across hosts" "$(jq .weights_identical clean.json)" true
mn_eq "one checksum on every rank" "$(jq -r '[.ranks[].weights_checksum] | unique | length' clean.json)" 1
grep -q "final weights bitwise identical on all $W ranks" clean.txt
mn_eq "text: verification line" "$?" 0

# --- the same job on one host (the machine itself, shared memory): the ddp phase must give the same bits ---
timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$W" "${common[@]}" \
  --json onehost.json >onehost.txt 2>onehost.err
mn_eq "same job on one host exits 0" "$?" 0
mn_eq "ddp over TCP across hosts = on one host (weights checksum)" \
  "$(jq -r .weights_checksum clean.json)" "$(jq -r .weights_checksum onehost.json)"
mn_eq "ddp loss curve across hosts = on one host" \
  "$(jq -c '.phases.ddp.loss' clean.json)" "$(jq -c '.phases.ddp.loss' onehost.json)"

# --- one host's own environment differs (a node whose profile sets an NCCL variable) ----------------
mn_env_set "$last" NCCL_SOCKET_NTHREADS=4
mn_mpirun 120 -np "$W" "${common[@]}" --json envhost.json >envhost.txt 2>envhost.err
mn_eq "run with one odd host exits 0" "$?" 0
lastranks="$(seq -s, $(((N - 1) * R)) $((W - 1)))"
mn_eq "json: the variable is named as a difference" \
  "$(jq -r '[.topology.environment.differences[] | tostring | test("NCCL_SOCKET_NTHREADS")] | any' envhost.json)" true
mn_eq "json: not consistent" "$(jq .topology.consistent envhost.json)" false
grep -qE "NCCL_SOCKET_NTHREADS differs: <unset> on ranks? [0-9,-]+; 4 on ranks? " envhost.txt
mn_eq "text: the difference names the value and the ranks" "$?" 0
mn_eq "the odd host's ranks are the ones with the value" \
  "$(jq -r --arg h "$last" '[.ranks[] | select(.host == $h) | .rank] | map(tostring) | join(",")' envhost.json)" "$lastranks"
rm -f "$MN_DIR/env.$last"

# --- one host's hardware differs (its hwloc topology is another machine's: HWLOC_XMLFILE) -------------
mn_env_set "$last" "HWLOC_XMLFILE=$MN_SRC/tests/data/fixtures/h200x2-vm.hwloc.xml"
mn_mpirun 120 -np "$W" "${common[@]}" --json hwhost.json >hwhost.txt 2>hwhost.err
mn_eq "run with one different host exits 0" "$?" 0
mn_eq "json: majority flags per host (the last one differs)" \
  "$(jq -r '[.topology.hosts[].majority] | map(tostring) | join(",")' hwhost.json)" \
  "$(for i in $(seq 1 "$N"); do [ "$i" -lt "$N" ] && printf 'true,' || printf 'false'; done)"
mn_eq "json: its signature is not the majority's" \
  "$(jq -r '[.topology.hosts[].signature] | (.[-1] != .[0]) and ((.[:-1] | unique | length) == 1)' hwhost.json)" true
mn_eq "text: its host line is marked" "$(grep -cE "^#   $last#[0-9a-f]+ .*<- differs" hwhost.txt)" 1
mn_eq "finding names the host" \
  "$(jq -r --arg h "$last" '[.findings[] | select(.check == "topology" and (.text | test("host " + $h + "#[0-9a-f]+ differs from the majority")))] | length' hwhost.json)" 1
mn_eq "json: not consistent" "$(jq .topology.consistent hwhost.json)" false
rm -f "$MN_DIR/env.$last"

# --- a different value given through mpirun -x on one host's ranks (MPMD) --------------------------
mpmd=()
for i in $(seq 0 $((N - 1))); do
  [ "$i" -gt 0 ] && mpmd+=(:)
  mpmd+=(-host "${MN_HOSTS[$i]}:$R" -np "$R")
  [ "$i" -eq $((N - 1)) ] && mpmd+=(-x NCCL_IB_HCA=mlx5_9)
  mpmd+=("${common[@]}" --json xhost.json)
done
mn_mpirun 120 "${mpmd[@]}" >xhost.txt 2>xhost.err
mn_eq "run with -x on one host exits 0" "$?" 0
mn_eq "json: -x variable flagged" \
  "$(jq -r '[.topology.environment.differences[] | tostring | test("NCCL_IB_HCA")] | any' xhost.json)" true
grep -qE "NCCL_IB_HCA differs: <unset> on ranks? [0-9,-]+; mlx5_9 on ranks? " xhost.txt
mn_eq "text: -x difference named" "$?" 0
mn_eq "verdict names the inconsistency" "$(grep -c '^# verdict: INCONSISTENT' xhost.txt)" 1

# --- a rank stopped on the last host: the watchdog asks every host over TCP, across the namespaces -------
# Every rank that times out prints one report (one write, so reports do not interleave); the first to finish
# aborts the job, so which ranks get to print varies. Each report holds what other hosts answered over TCP
# (their live ranks: alive, and the collective they wait in), and names the stopped rank: with 2+ ranks on its
# host, from that host's answer (pid, stale heartbeat, last location); with one, as a host that did not answer.
stop=$((W - 1))
mn_mpirun 60 -np "$W" -x DDPBENCH_TEST_FAULT=stop:$stop:ddp -x OPENBLAS_NUM_THREADS=1 "$MN_BIN" --config "$cfg" \
  --device cpu --straggler-pct 1000 --progress none --timeout 8 >stop.txt 2>stop.err
mn_eq "a stopped rank on $last: exit 3" "$?" 3
if [ "$R" -ge 2 ]; then
  sus="^  SUSPECT rank $stop host $last pid [0-9]+: not answering .*last known: phase ddp, step 1 of"
else
  sus="^  SUSPECT rank $stop host $last: its host did not answer the query"
fi
# 1 when some report names the stopped rank as above and shows a live rank of another host than the reporter's
reports=$(awk -v sus="$sus" '
  match($0, /^\[ddpbench rank [0-9]+ host [^]]+\] asked every rank/) {
    b++; h = $0; sub(/^\[ddpbench rank [0-9]+ host /, "", h); sub(/\].*/, "", h); rep[b] = h; on = 1; next }
  on && /^  / {
    if ($0 ~ sus) named[b] = 1
    if ($0 ~ /^  rank [0-9]+ host [^ ]+ pid [0-9]+: alive, in phase ddp.*waiting in MPI_/) {
      h = $0; sub(/^  rank [0-9]+ host /, "", h); sub(/ .*/, "", h); if (h != rep[b]) remote[b] = 1 }
    next }
  { on = 0 }
  END { ok = 0; for (i = 1; i <= b; i++) if (named[i] && remote[i]) ok = 1; print b + 0, ok }' stop.err)
mn_eq "a report names rank $stop on $last and shows a live rank of another host, asked over TCP" "${reports#* }" 1
[ "${reports#* }" = 1 ] || sed "s/^/#   /" stop.err | head -40

# --- rank 0 frozen, one rank per host: the live ranks time out together and ask each
# other at the same moment; each answers while it asks, so no report names a live rank. 4 runs.
if [ "$N" -ge 3 ] && [ "$R" = 1 ]; then
  false_named=0 named0=0
  for t in 1 2 3 4; do
    mn_mpirun 60 -np "$W" -x DDPBENCH_TEST_FAULT=stop:0:ddp -x OPENBLAS_NUM_THREADS=1 "$MN_BIN" --config "$cfg" \
      --device cpu --straggler-pct 1000 --progress none --timeout 5 >stop0.txt 2>stop0.err
    rc=$?
    [ "$rc" = 3 ] || echo "# run $t: exit $rc"
    grep -qE "^  SUSPECT rank 0 host " stop0.err && named0=$((named0 + 1))
    if grep -E "^  SUSPECT rank [1-9][0-9]* host " stop0.err >/dev/null; then
      false_named=$((false_named + 1))
      sed "s/^/#   run $t: /" stop0.err | head -20
    fi
  done
  mn_eq "rank 0 frozen: 4 of 4 runs name rank 0" "$named0" 4
  mn_eq "rank 0 frozen: no live rank named in any of 4 runs" "$false_named" 0
fi

# --- launch/run-hosts.sh, the wrapper the README shows, with the interface pinned ---------------------
# Only the rsh agent is added (a cluster has ssh); NCCL_DEBUG set on the launcher must reach every rank.
timeout -k 5 120 ip netns exec "${MN_PREFIX}n0" env DDPBENCH_MPIRUN_ARGS="--mca plm_rsh_agent $MN_HERE/agent.sh" \
  DDPBENCH_BIN="$MN_BIN" NCCL_DEBUG=WARN OPENBLAS_NUM_THREADS=1 \
  "$MN_SRC/launch/run-hosts.sh" "$MN_DIR/hostfile" --ppn "$R" --iface "$MN_PREFIX" \
  --config "$cfg" --device cpu --straggler-pct 1000 --progress none --timeout 60 --json wrap.json >wrap.txt 2>wrap.err
mn_eq "launch/run-hosts.sh exits 0" "$?" 0
mn_eq "wrapper: world and nodes" "$(jq -c '[.world_size, .nodes]' wrap.json)" "[$W,$N]"
mn_eq "wrapper: $R ranks per host (ppr)" "$(jq -r '[.topology.ranks[].local_size] | unique | map(tostring) | join(",")' wrap.json)" "$R"
mn_eq "wrapper: NCCL_SOCKET_IFNAME and MPI's interface pinned" \
  "$(jq -r '[.environment.NCCL_SOCKET_IFNAME, .environment.OMPI_MCA_btl_tcp_if_include] | join(" ")' wrap.json)" "$MN_PREFIX $MN_PREFIX"
mn_eq "wrapper: NCCL_DEBUG reached every rank (same on all, no difference)" \
  "$(jq -r '[.environment.NCCL_DEBUG, (.topology.environment.differences | length)] | map(tostring) | join(" ")' wrap.json)" "WARN 0"
mn_eq "wrapper: prints the mpirun line" "$(grep -c '^# mpirun -q --hostfile .* --map-by ppr:'"$R"':node' wrap.err)" 1
mn_eq "wrapper: weights identical" "$(jq .weights_identical wrap.json)" true
mn_done
