#!/usr/bin/env bash
# test_straggler_hosts.sh: the straggler rule end to end on the CPU device, three emulated hosts, one rank each.
# The rank on host 2 is made really slower: it runs in a cpu cgroup held to 5 % of one CPU (mn_cgroup_cpu;
# throttle.sh holds the rank until this script has moved it there), while the other two share the machine's cores. Asserts, over REPEATS runs each
# way (default 3): the throttled run names exactly one straggler, rank 1 on host 2 (finding in the JSON and the
# verdict lines), and exits 4; the same job without the throttle names nobody and exits 0. The counts of each
# outcome are printed, so a flaky rule shows as a count below REPEATS rather than as a lucky single run.
# Exits 77 with the reason when the machine refuses namespaces or cpu cgroups.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 200 "$@"
repeats=${1:-3}
mn_init
mn_cgroup_cpu 5 2>"$MN_DIR/cg.err" || mn_skip "$(cat "$MN_DIR/cg.err")"
procs=$MN_CG_PROCS
mn_hosts_up 3 1 || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR" || exit 1
h2=${MN_HOSTS[1]}
# About 0.3 GFLOP a step (3 layers of 512, batch 64): ~10-20 ms unthrottled on this shared machine, so the 20 ms
# quota period shows as a slower step (~20 x), not as a rare stall; the two others share 2 cores with whatever
# else runs, so they differ by tens of % between themselves, up to +101 % (docs/straggler.md): the throttle
# (~20-40 x) must be far beyond that, and the cpu device's run-to-run floor (200 %) keeps the healthy gaps
# unnamed. 10 timed steps of a few ms: the size the rule judges (fewer would be "too short to judge").
job=(--config "$MN_SRC/configs/ci.ini" --device cpu --hidden 512 --batch 64 --steps 10 --warmup 2 --progress none --timeout 60)
env=(-x OPENBLAS_NUM_THREADS=1 -x OMPI_MCA_mpi_yield_when_idle=1)
named() { jq -r '[.findings[] | select(.check == "straggler") | .subject] | unique | join(";")' "$1"; }

slow_ok=0 calm_ok=0
for i in $(seq 1 "$repeats"); do
  rm -f throttle.pid throttle.go
  mn_mpirun 90 -np 3 "${env[@]}" "$MN_HERE/throttle.sh" "$h2" "$MN_DIR" "$MN_BIN" "${job[@]}" --json "slow$i.json" \
    >"slow$i.txt" 2>"slow$i.err" &
  run=$!
  for _ in $(seq 300); do [ -e throttle.pid ] && break; sleep 0.1; done
  echo "$(cat throttle.pid 2>/dev/null)" >"$procs" 2>>"slow$i.err" || echo "#   could not throttle host 2's rank"
  touch throttle.go
  wait "$run"
  rc=$?
  got=$(named "slow$i.json" 2>/dev/null)
  echo "#   throttled run $i: exit $rc, straggler: ${got:-none}"
  grep -h '^# verdict\|straggler' "slow$i.txt" | head -3 | sed 's/^/#     /'
  [ "$rc" = 4 ] && [ "$got" = "rank 1 ($h2)" ] && grep -q "$h2" "slow$i.txt" && slow_ok=$((slow_ok + 1))

  # 3 ranks on 2 shared cores: the rank that shares a core for a whole run is really slower, by up to +101 %
  # (+25 % or more named a healthy rank in CI once, under the old rule's --straggler-pct 25). That is the
  # machine, not a fault: the same defaults as the throttled run, where the device's floor keeps it unnamed.
  mn_mpirun 90 -np 3 "${env[@]}" "$MN_BIN" "${job[@]}" --json "calm$i.json" >"calm$i.txt" 2>"calm$i.err"
  rc=$?
  got=$(named "calm$i.json" 2>/dev/null)
  echo "#   unthrottled run $i: exit $rc, straggler: ${got:-none}"
  grep -h 'straggler\|slowest' "calm$i.txt" | head -3 | sed 's/^/#     /'
  [ "$rc" = 0 ] && [ -z "$got" ] && [ -s "calm$i.json" ] && calm_ok=$((calm_ok + 1))
done
mn_eq "throttled: rank 1 on $h2 named alone, exit 4, in every run" "$slow_ok/$repeats" "$repeats/$repeats"
mn_eq "unthrottled: nobody named, exit 0, in every run" "$calm_ok/$repeats" "$repeats/$repeats"
mn_done
