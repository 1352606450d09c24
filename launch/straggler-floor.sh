#!/usr/bin/env bash
# launch/straggler-floor.sh [RUNS] [OUT]: measures the straggler rule's run-to-run floor of this machine's CPU
# device (docs/straggler.md): RUNS (default 20) identical healthy runs of a job the rule judges (10 timed steps
# of a few ms), on 2 ranks and on 3 (more ranks than a 2-core machine has cores), each with the machine idle and
# with one busy loop beside it (other work, as on a login node or under ctest -j2). Prints, per case and phase,
# every run's gap between the slowest rank's median compute time and the median rank's (in %) and the largest;
# the last line is the largest gap of all. OUT (default a temporary folder) keeps each run's JSON.
# Needs jq and an MPI launcher; run from the source tree after launch/setup.sh.
set -uo pipefail
runs=${1:-20}
out=${2:-$(mktemp -d /tmp/ddpbench-floor-XXXXXX)}
bin=${DDPBENCH_BIN:-build/dev/ddpbench}
mkdir -p "$out" || exit 1
export OPENBLAS_NUM_THREADS=1
job=(--config configs/ci.ini --device cpu --hidden 512 --batch 64 --steps 10 --warmup 2 --progress none --force --timeout 60)
worst=0
for load in idle busy; do
  for np in 2 3; do
    busy=""
    if [ $load = busy ]; then (while :; do :; done) & busy=$!; fi
    for i in $(seq 1 "$runs"); do
      f="$out/$load-np$np-$i.json"
      mpirun -np "$np" --oversubscribe --bind-to none "$bin" "${job[@]}" --json "$f" >/dev/null 2>&1 ||
        echo "# $load np$np run $i: exit $?"
    done
    [ -n "$busy" ] && kill "$busy"
    for ph in local ddp; do
      gaps=$(for i in $(seq 1 "$runs"); do
        jq -r --arg ph "$ph" '.findings[] | select((.check == "slowest_rank" or .check == "straggler")
          and (.text | startswith($ph + ":"))) | (.measured / .expected - 1) * 100' "$out/$load-np$np-$i.json" 2>/dev/null |
          sort -g | tail -1
      done)
      max=$(printf '%s\n' $gaps | sort -g | tail -1)
      printf '%s np%s %-5s max %6.1f %%  runs: %s\n' "$load" "$np" "$ph" "${max:-nan}" "$(printf '%.0f ' $gaps)"
      worst=$(printf '%s\n%s\n' "$worst" "${max:-0}" | sort -g | tail -1)
    done
  done
done
printf 'largest gap of all: %.1f %% (%s runs a case, in %s)\n' "$worst" "$runs" "$out"
