#!/bin/bash
# 20 identical runs per case; prints each run's slowest-rank excess per phase
cd /work/main
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
job=(--config configs/ci.ini --device cpu --hidden 512 --batch 64 --steps 10 --warmup 2 --quiet)
for load in none busy; do
 for np in 3; do
  lp=""
  [ $load = busy ] && { (while :; do :; done) & lp=$!; }
  for i in $(seq 1 20); do
    mpirun -np $np --oversubscribe --bind-to none -x OMPI_MCA_mpi_yield_when_idle=1 build/dev/ddpbench "${job[@]}" --force --json /tmp/floor/r.json >/dev/null 2>&1
    jq -r --arg c "$load np$np" '.findings[] | select(.check=="slowest_rank" or .check=="straggler") | "\($c) \(.text|split(":")[0]) \(.check) \((.measured/.expected-1)*100)"' /tmp/floor/r.json
  done
  [ -n "$lp" ] && kill $lp
 done
done
