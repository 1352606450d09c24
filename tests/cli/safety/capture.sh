#!/usr/bin/env bash
# capture.sh BIN OUTDIR: records the observable behaviour of a ddpbench binary into OUTDIR (see README.md):
#   help/<sub>.txt        `BIN [sub] --help`: "exit N", stdout, "--- stderr", stderr
#   help/version.txt      `BIN --version`, the same form
#   launch.txt            how the MPI subcommands were launched (singleton or mpirun -np 1), and why
#   errors.tsv            per case of bad-inputs.txt: case, exit code, the first "ddpbench..." stderr line
#   messages.tsv          per case: every "ddpbench..." line of its stderr (errors.tsv has the first only)
#   outputs.tsv           per case: the files it left in its TMP dir (beyond the fixtures), or -
#   records/<name>.txt    record identities (measurement, group, metric, labels, unit, better, fields, count)
#                         of a 2-rank --json run on the CPU device; doctor: its findings' identities
#   records/<name>.keys.txt   the document's top-level keys, config keys and key paths
#   records/<name>.findings.txt  (run, accept, collectives) the (check, scope) set of the findings
#   records/<name>.files.txt     the other files the run wrote (prom series, CSV header and rows, XML names)
#   exit.txt              the exit code of each of those runs
# Needs bash, coreutils, mpirun (Open MPI) and python3 (standard library). Every ddpbench call is bounded
# by `timeout 120`. Nothing is written outside OUTDIR except one temp dir, removed at the end.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN OUTDIR" >&2
  exit 2
fi
BIN=$(readlink -f "$1")
OUTDIR=$2
if [ ! -x "$BIN" ]; then
  echo "capture.sh: $1 is not an executable" >&2
  exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
CORPUS=${SAFETY_CORPUS:-$HERE/bad-inputs.txt}
FIXTURES=$HERE/fixtures
PY=$(python3 -c 'import sys; print(sys.executable)') # not a pyenv shim: 0.1 s a call less
NORM="$PY -S $HERE/normalize.py"
T=120 # seconds, every ddpbench invocation

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LC_ALL=C TZ=UTC
# what would change ddpbench's behaviour between captures: its test hooks, NCCL settings
for v in $(compgen -e | grep -E '^(DDPBENCH_|NCCL_)' || true); do unset "$v"; done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpsafety.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
C=$WORK/case # the TMP of a case: made afresh for each
export SAFETY_WORK=$WORK SAFETY_CASE_DIR=$C SAFETY_HOST=$(hostname)
SAFETY_LONG=$(printf 'a%.0s' $(seq 1500))
export SAFETY_LONG

if [ -e "$OUTDIR" ] && [ -n "$(ls -A "$OUTDIR" 2>/dev/null)" ] && [ ! -f "$OUTDIR/launch.txt" ]; then
  echo "capture.sh: $OUTDIR exists and is not a capture (no launch.txt): not replacing it" >&2
  exit 2
fi
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR/help" "$OUTDIR/records"
OUTDIR=$(cd "$OUTDIR" && pwd)
start=$(date +%s)

MPIRUN=(mpirun --oversubscribe)

fresh_case_dir() {
  rm -rf "$C"
  mkdir -p "$C/dir" "$C/emptydir"
  cp -R "$FIXTURES/." "$C/"
  : >"$C/dir/file"
}

# ---- how MPI subcommands start: a singleton, or mpirun -np 1 ---------------------------------------------
fresh_case_dir
SINGLE=1
(cd "$C" && timeout $T "$BIN" doctor --help >"$WORK/o" 2>"$WORK/e")
rc=$?
{
  if [ $rc -eq 0 ]; then
    echo "mpi subcommands (run, accept, collectives, doctor): singleton (no mpirun): \`BIN doctor --help\` exit 0"
  else
    SINGLE=0
    echo "mpi subcommands (run, accept, collectives, doctor): mpirun -np 1: a singleton \`BIN doctor --help\` gave exit $rc: $($NORM errline "$WORK/e")"
  fi
  echo "cases written sub@N: mpirun -np N --oversubscribe"
  echo "compare, topo, export: plain"
} >"$OUTDIR/launch.txt"

# launcher for SUB (run|accept|collectives|doctor|compare|topo|export) with NP ranks (0: default)
launcher() {
  local sub=$1 np=$2
  L=()
  if [ "$np" -gt 0 ]; then
    L=("${MPIRUN[@]}" -np "$np")
  elif [ $SINGLE -eq 0 ]; then
    case $sub in run | accept | collectives | doctor) L=("${MPIRUN[@]}" -np 1) ;; esac
  fi
}

subword() { # the words before the arguments
  W=()
  [ "$1" != run ] && W=("$1")
  return 0
}

# ---- 1a. help ---------------------------------------------------------------------------------------
help_one() { # NAME then the command
  local name=$1
  shift
  fresh_case_dir
  (cd "$C" && timeout $T "$@" >"$WORK/o" 2>"$WORK/e")
  local rc=$?
  {
    echo "exit $rc"
    $NORM text "$WORK/o"
    echo "--- stderr"
    $NORM text "$WORK/e"
  } >"$OUTDIR/help/$name.txt"
  return $rc
}
for sub in run accept collectives compare doctor topo export; do
  subword "$sub"
  if ! help_one "$sub" "$BIN" "${W[@]}" --help; then
    case $sub in
      run | accept | collectives | doctor)
        echo "help $sub: a singleton --help failed (help/$sub.singleton.txt); help/$sub.txt is mpirun -np 1" >>"$OUTDIR/launch.txt"
        mv "$OUTDIR/help/$sub.txt" "$OUTDIR/help/$sub.singleton.txt"
        help_one "$sub" "${MPIRUN[@]}" -np 1 "$BIN" "${W[@]}" --help
        ;;
    esac
  fi
done
help_one version "$BIN" --version

# ---- 1b. the corpus of bad inputs ------------------------------------------------------------------
: >"$OUTDIR/errors.tsv"   # case TAB exit code TAB first "ddpbench" stderr line (no header line)
: >"$OUTDIR/messages.tsv" # case TAB every "ddpbench" stderr line, joined by " | "
: >"$OUTDIR/outputs.tsv"  # case TAB the files it left in TMP, or -
ncase=0
declare -A seen=()
while IFS= read -r line || [ -n "$line" ]; do
  case $line in '' | '#'*) continue ;; esac
  if [ -n "${seen[$line]+x}" ]; then
    echo "capture.sh: duplicate case in $CORPUS: $line" >&2
    continue
  fi
  seen[$line]=1
  spec=${line%%|*}
  rest=${line#*|}
  sub=${spec%@*}
  np=0
  [ "$spec" != "$sub" ] && np=${spec#*@}
  fresh_case_dir
  args=()
  if [ -n "$rest" ]; then
    read -r -a toks <<<"$rest"
    for t in "${toks[@]}"; do
      case $t in
        EMPTY) args+=("") ;;
        LONG) args+=("$SAFETY_LONG") ;;
        *) args+=("${t//TMP/$C}") ;;
      esac
    done
  fi
  launcher "$sub" "$np"
  subword "$sub"
  t0=$(date +%s%N)
  (cd "$C" && timeout $T "${L[@]}" "$BIN" "${W[@]}" "${args[@]}" >"$WORK/o" 2>"$WORK/e" </dev/null)
  rc=$?
  [ -n "${SAFETY_TIMES:-}" ] && printf '%s\t%s\n' "$((($(date +%s%N) - t0) / 1000000))" "$line" >>"$SAFETY_TIMES"
  mapfile -t res < <($NORM case "$WORK/e" "$C" "$FIXTURES")
  printf '%s\t%s\t%s\n' "$line" "$rc" "${res[0]}" >>"$OUTDIR/errors.tsv"
  printf '%s\t%s\n' "$line" "${res[1]}" >>"$OUTDIR/messages.tsv"
  printf '%s\t%s\n' "$line" "${res[2]}" >>"$OUTDIR/outputs.tsv"
  ncase=$((ncase + 1))
done <"$CORPUS"

# ---- 1c/1d. record identities of runs that succeed -----------------------------------------------------
: >"$OUTDIR/exit.txt"
record_run() { # NAME SUB NP ARGS... ; the run writes TMP/out.json (and whatever ARGS name in TMP)
  local name=$1 sub=$2 np=$3
  shift 3
  fresh_case_dir
  local L2=("${MPIRUN[@]}" -np "$np")
  subword "$sub"
  (cd "$C" && timeout $T "${L2[@]}" "$BIN" "${W[@]}" "$@" >"$WORK/o" 2>"$WORK/e" </dev/null)
  local rc=$?
  echo "$name $rc" >>"$OUTDIR/exit.txt"
  if [ -f "$C/out.json" ]; then
    $NORM records "$C/out.json" "$sub" >"$OUTDIR/records/$name.txt"
    $NORM keys "$C/out.json" >"$OUTDIR/records/$name.keys.txt"
    [ "$sub" != doctor ] && $NORM findings "$C/out.json" >"$OUTDIR/records/$name.findings.txt"
  else
    echo "no JSON written (exit $rc): $($NORM errline "$WORK/e")" >"$OUTDIR/records/$name.txt"
  fi
  {
    [ -f "$C/out.prom" ] && echo "## out.prom (series: name{label names})" && $NORM prom "$C/out.prom"
    [ -f "$C/out.csv" ] && echo "## out.csv" && $NORM csv "$C/out.csv"
    [ -f "$C/hosts.txt" ] && echo "## hosts.txt (--failed-hosts)" && $NORM text "$C/hosts.txt"
    [ -d "$C/xml" ] && echo "## xml/ (--topo-xml)" && (cd "$C/xml" && ls -1) | $NORM text /dev/stdin
  } >"$OUTDIR/records/$name.files.txt"
  [ -s "$OUTDIR/records/$name.files.txt" ] || rm -f "$OUTDIR/records/$name.files.txt"
  return 0
}
record_run run run 2 --config "$C/ci.ini" --seed 42 --json "$C/out.json"
record_run run-groups run 2 --config "$C/ci.ini" --seed 7 --groups world,node,pairs,first:1 --sweep \
  --json "$C/out.json" --prom "$C/out.prom" --csv "$C/out.csv" --failed-hosts "$C/hosts.txt" --topo-xml "$C/xml"
record_run accept accept 2 --health-seconds 0.5 --json "$C/out.json" --failed-hosts "$C/hosts.txt"
record_run collectives collectives 2 -b 1K -e 64K -f 4 --json "$C/out.json"
record_run collectives-all collectives 2 all -d all -o all -b 1K -e 1K -n 2 -w 0 --json "$C/out.json"
record_run doctor doctor 2 --json "$C/out.json" --topo-xml "$C/xml"
# a doctor with something to find: rank 1 has an NCCL_* variable that rank 0 lacks (MPMD launch)
fresh_case_dir
(cd "$C" && timeout $T "${MPIRUN[@]}" -np 1 "$BIN" doctor --json "$C/out.json" : \
  -np 1 -x NCCL_DEBUG=WARN "$BIN" doctor --json "$C/out.json" >"$WORK/o" 2>"$WORK/e" </dev/null)
rc=$?
echo "doctor-nccl-env $rc" >>"$OUTDIR/exit.txt"
if [ -f "$C/out.json" ]; then
  $NORM records "$C/out.json" doctor >"$OUTDIR/records/doctor-nccl-env.txt"
  $NORM keys "$C/out.json" >"$OUTDIR/records/doctor-nccl-env.keys.txt"
else
  echo "no JSON written (exit $rc): $($NORM errline "$WORK/e")" >"$OUTDIR/records/doctor-nccl-env.txt"
fi

end=$(date +%s)
echo "capture.sh: $ncase cases, $(ls "$OUTDIR/records" | wc -l) record files into $OUTDIR in $((end - start)) s" >&2
