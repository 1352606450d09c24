#!/usr/bin/env bash
# test_slurm.sh: ddpbench under a real Slurm (Debian's 22.05: slurmctld, slurmd, munge, mpi/pmix), configured
# here as a one-node cluster on this machine, started and stopped by this test. Asserts: `srun --mpi=pmix -n 2
# ddpbench` runs, with identical weights; `sbatch launch/slurm.sbatch` as a user submits it (only the task
# count given on sbatch's command line, as the script's header says) exits 0 with its report in the job's
# output file; Slurm's job and step ids reach the JSON; a failing job's exit code reaches sbatch.
# It must never leave a daemon running: a trap stops munged, slurmctld and slurmd on every exit path, and a
# lock (flock) keeps two runs on one machine from starting two Slurms. Exits 77 naming what is missing.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 240 "$@"
[ "$(id -u)" -eq 0 ] || mn_skip "starting Slurm and munge daemons needs root"
for t in munged slurmctld slurmd srun sbatch scontrol jq flock runuser timeout; do
  command -v "$t" >/dev/null || mn_skip "$t not installed (tests/multinode/install.sh installs it)"
done
[ -x "$MN_BIN" ] || mn_skip "no ddpbench binary at $MN_BIN"
plugdir=$(dirname "$(dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep -m1 '/mpi_pmix.so$')" 2>/dev/null)
[ -n "$plugdir" ] && [ -e "$plugdir/mpi_pmix.so" ] || mn_skip "Slurm's mpi/pmix plugin is not installed"

D=$(mktemp -d /tmp/ddpb-slurm.XXXXXX)
chmod 755 "$D"
stop_pidfile() { # PIDFILE: TERM, wait up to 10 s, then KILL
  local p
  p=$(cat "$1" 2>/dev/null) || return 0
  [ -n "$p" ] || return 0
  kill "$p" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$p" 2>/dev/null
}
slurm_cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  [ "$rc" = 124 ] && { echo "FAIL timed out after ${SECONDS}s (bound ${MN_BOUND:-none}): cleaning up"; echo "$MN_PASS passed, $((MN_FAIL + 1)) failed"; }
  [ -n "${SLURM_CONF:-}" ] && timeout 10 scancel --full --quiet -u root 2>/dev/null
  stop_pidfile "$D/slurmd.pid"
  stop_pidfile "$D/slurmctld.pid"
  stop_pidfile "$D/munged.pid"
  rm -rf "$D"
  exit "$rc"
}
trap slurm_cleanup EXIT
trap 'exit 124' INT TERM HUP

# One Slurm per machine: a second run waits for the first (up to 4 minutes), then gives up.
mkdir -p /run/lock
exec 9>/run/lock/ddpbench-slurm.lock
flock -w 200 9 || { echo "another ddpbench Slurm test holds /run/lock/ddpbench-slurm.lock"; echo "0 passed, 1 failed"; exit 1; }

# --- munge with its own key and socket (none of the machine's) ------------------------------------
mkdir -p "$D/munge" "$D/munge/key"
head -c 1024 /dev/urandom >"$D/munge/key/munge.key"
chown -R munge:munge "$D/munge"
chmod 755 "$D/munge"
chmod 700 "$D/munge/key"
chmod 400 "$D/munge/key/munge.key"
sock=$D/munge/munge.sock
runuser -u munge -- munged --key-file="$D/munge/key/munge.key" --socket="$sock" --pid-file="$D/munge/munged.pid" \
  --seed-file="$D/munge/seed" --log-file="$D/munge/munged.log" || { cat "$D/munge/munged.log"; echo "0 passed, 1 failed"; exit 1; }
ln -s "$D/munge/munged.pid" "$D/munged.pid"

# --- a one-node cluster ---------------------------------------------------------------------------
host=$(hostname)
mkdir -p "$D/state" "$D/spool"
cat >"$D/slurm.conf" <<EOF
ClusterName=ddpbtest
SlurmctldHost=$host
SlurmctldPort=6917
SlurmdPort=6918
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
GresTypes=gpu
SlurmdParameters=config_overrides
NodeName=$host CPUs=8 RealMemory=4000 Gres=gpu:8 State=UNKNOWN
PartitionName=ddpb Nodes=ALL Default=YES MaxTime=30 State=UP OverSubscribe=YES
EOF
# The node is declared as an 8-CPU node with 8 GPUs so that the batch script schedules as committed:
# config_overrides makes Slurm believe the configuration rather than the hardware, and the GPUs are 8 device
# nodes that are /dev/null (1,3) underneath (Slurm's gres/gpu wants character devices; nothing opens them).
mkdir -p "$D/dev" && for g in 0 1 2 3 4 5 6 7; do mknod "$D/dev/nvidia$g" c 1 3; done
echo "NodeName=$host Name=gpu File=$D/dev/nvidia[0-7]" >"$D/gres.conf"
export SLURM_CONF=$D/slurm.conf
slurmctld -c -f "$SLURM_CONF" || { cat "$D/slurmctld.log"; echo "0 passed, 1 failed"; exit 1; }
slurmd -f "$SLURM_CONF" || { cat "$D/slurmd.log"; echo "0 passed, 1 failed"; exit 1; }
ok=0
for _ in $(seq 60); do
  state=$(timeout 5 sinfo -h -N -o %T 2>/dev/null)
  case "$state" in idle*|mixed*) ok=1; break ;; esac
  sleep 0.5
done
mn_eq "one-node cluster up (node state) after ${SECONDS}s" "$ok" 1
[ "$ok" = 1 ] || { tail -n 20 "$D/slurmctld.log" "$D/slurmd.log"; sinfo -N; mn_done; exit 1; }

cd "$D" || exit 1
cfg=$MN_SRC/configs/ci.ini

# --- srun --mpi=pmix -------------------------------------------------------------------------------
timeout -k 5 120 srun --mpi=pmix -n 2 --cpu-bind=none "$MN_BIN" --config "$cfg" --progress none --timeout 60 --straggler-pct 1000 \
  --json srun.json >srun.txt 2>srun.err
mn_eq "srun --mpi=pmix -n 2 ddpbench exits 0" "$?" 0
[ -s srun.json ] || { cat srun.txt srun.err; tail -5 slurmd.log; }
mn_eq "srun: world 2 on 1 node" "$(jq -c '[.world_size, .nodes]' srun.json)" "[2,1]"
mn_eq "srun: local ranks from PMIx" "$(jq -c '[.ranks[].local_rank]' srun.json)" "[0,1]"
mn_eq "srun: weights identical" "$(jq .weights_identical srun.json)" true
jobid=$(jq -r '.environment.SLURM_JOB_ID // empty' srun.json)
mn_check "srun: SLURM_JOB_ID in the JSON ($jobid)" test -n "$jobid"
mn_eq "srun: SLURM_STEP_ID in the JSON (the first step of its job)" "$(jq -r '.environment.SLURM_STEP_ID' srun.json)" 0

# --- sbatch launch/slurm.sbatch as a user submits it -----------------------------------------------
# From the project root, the script as committed (8 tasks and 8 GPUs on one node); only where the output and
# the JSON go are given on sbatch's line (a test must not write into the source tree).
cd "$MN_SRC" || exit 1
sb=(--parsable --wait --output="$D/job-%j.out" --export=ALL,OPENBLAS_NUM_THREADS=1,OMPI_MCA_mpi_yield_when_idle=1,DDPBENCH_JSON="$D/sbatch.json")
jid=$(timeout -k 5 90 sbatch "${sb[@]}" launch/slurm.sbatch configs/ci.ini --progress none --timeout 60 --straggler-pct 1000)
rc=$?
cd "$D" || exit 1
[ "$rc" = 0 ] || { timeout 10 scontrol show job "$jid"; cat "job-$jid.out"; tail -n 20 slurmctld.log; }
mn_eq "sbatch launch/slurm.sbatch exits 0 (job $jid, at ${SECONDS}s)" "$rc" 0
mn_eq "sbatch: job output has the report" "$(grep -c '^# verification: final weights bitwise identical on all 8 ranks' "job-$jid.out")" 1
mn_eq "sbatch: job state COMPLETED, exit 0:0" "$(timeout 10 scontrol show job "$jid" 2>/dev/null | grep -o 'JobState=[A-Z]*\|ExitCode=[0-9:]*' | paste -sd' ')" "JobState=COMPLETED ExitCode=0:0"
mn_eq "sbatch: the job's id in the JSON" "$(jq -r .environment.SLURM_JOB_ID sbatch.json)" "$jid"
mn_eq "sbatch: the step id in the JSON (srun's first step in the batch job)" "$(jq -r .environment.SLURM_STEP_ID sbatch.json)" 0
mn_eq "sbatch: weights identical" "$(jq .weights_identical sbatch.json)" true
mn_eq "sbatch: world 8 on 1 node, local ranks 0-7" "$(jq -c '[.world_size, .nodes, [.ranks[].local_rank]]' sbatch.json)" "[8,1,[0,1,2,3,4,5,6,7]]"
mn_eq "sbatch: the script's 8 GPUs allocated and seen by the ranks (CUDA_VISIBLE_DEVICES)" \
  "$(jq -r .environment.CUDA_VISIBLE_DEVICES sbatch.json)" "0,1,2,3,4,5,6,7"

# --- a failing job: ddpbench's exit code (2, bad input) must reach sbatch ---------------------------
cd "$MN_SRC" || exit 1
jid2=$(timeout -k 5 60 sbatch "${sb[@]}" launch/slurm.sbatch configs/ci.ini --no-such-key 1)
rc=$?
cd "$D" || exit 1
mn_eq "sbatch: a bad option fails the job (sbatch --wait exit 2, at ${SECONDS}s)" "$rc" 2
mn_eq "sbatch: its output names the key" "$(grep -c 'no-such-key' "job-$jid2.out")" 1
mn_done
