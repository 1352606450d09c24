#!/usr/bin/env bash
# ab.sh: A/B comparison of two software stacks, inside one allocation: runs ddpbench N times with stack A and N times
# with stack B, interleaved in ABBA order (A B, B A, A B, ...) so that slow drift of the machine lands on both
# sides alike, then `ddpbench compare`s them. Each run is one sample; use N >= 10 to find changes of a few %.
#
#   launch/ab.sh [options] [-- ddpbench options]
#     --a-env FILE, --b-env FILE   the side's environment: KEY=VALUE lines (no shell expansion; # comments)
#     --a-ld DIR,   --b-ld DIR     prepended to the side's LD_LIBRARY_PATH (e.g. another NCCL's lib folder)
#     --aa                         A/A: run stack A on both sides, to measure the noise floor (compare.json
#                                  is then the file for `compare --noise`)
#     -n N                         runs a side (default 10)
#     -np P                        ranks a run (default 1)
#     --launch "CMD"               how one run starts (default "launch/run.sh -np P"; e.g. "srun -n 16")
#     --out DIR                    results folder, must not exist (default results/ab-<UTC time>)
#     --compare "ARGS"             extra arguments for compare (e.g. "--threshold-pct 1 --noise aa.json")
# ddpbench options must not include --json or --quiet: ab.sh names each run's file. Paths given to ab.sh are
# the caller's; paths inside ddpbench options are the project root's, as with launch/run.sh.
# Each run is labelled side=A or side=B (ddpbench --label) where the build has --label (not with --aa).
# Writes DIR/a/run-NN.json, DIR/b/run-NN.json with their logs (plot them with
# `launch/plot.py --out DIR/plots DIR/a/*.json DIR/b/*.json --compare DIR/compare.json`: one colour a side), DIR/order.txt, and the comparison as
# DIR/compare.txt (also printed) and DIR/compare.json. Exits with compare's code: 0, 5 (a significant
# regression beyond the threshold) or 2 (bad input); 3 when a run fails.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."
# GPU machines: the libraries fetched beside the tree and $DDPBENCH_ALT_NCCL_DIR (see launch/gpu-check.sh)
# (sourced with errexit off: the env file's probe for the second NCCL fails where there is none)
if [ -f .device-deps/env.sh ]; then set +e; source .device-deps/env.sh; set -e; fi

die() { echo "ab.sh: $*" >&2; exit 2; }
a_env="" b_env="" a_ld="" b_ld="" aa=0 n=10 np=1 launch="" out="" cmp_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --a-env | --b-env | --a-ld | --b-ld | -n | -np | --launch | --out | --compare)
      [ $# -ge 2 ] || die "$1 needs a value" ;;
  esac
  case "$1" in
    --a-env) a_env=$2; shift 2 ;;
    --b-env) b_env=$2; shift 2 ;;
    --a-ld) a_ld=$2; shift 2 ;;
    --b-ld) b_ld=$2; shift 2 ;;
    --aa) aa=1; shift ;;
    -n) n=$2; shift 2 ;;
    -np) np=$2; shift 2 ;;
    --launch) launch=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --compare) cmp_args=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (ddpbench options go after --; see --help)" ;;
  esac
done
# ab.sh's own paths are the caller's; ddpbench options' paths are the project root's (as with launch/run.sh)
abspath() { case "$1" in "" | /*) printf '%s' "$1" ;; *) printf '%s/%s' "$here" "$1" ;; esac; }
a_env=$(abspath "$a_env") b_env=$(abspath "$b_env") a_ld=$(abspath "$a_ld") b_ld=$(abspath "$b_ld") out=$(abspath "$out")
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "-n must be a positive integer, got '$n'"
[[ "$np" =~ ^[1-9][0-9]*$ ]] || die "-np must be a positive integer, got '$np'"
[ "$n" -ge 4 ] || echo "ab.sh: $n runs a side: compare will print medians only (4 or more are needed)" >&2
if [ "$aa" = 1 ]; then
  [ -z "$b_env$b_ld" ] || die "--aa runs stack A on both sides: give --a-env/--a-ld only"
  b_env=$a_env b_ld=$a_ld
fi
for f in "$a_env" "$b_env"; do [ -z "$f" ] || [ -r "$f" ] || die "env file $f cannot be read"; done
for d in "$a_ld" "$b_ld"; do [ -z "$d" ] || [ -d "$d" ] || die "library folder $d does not exist"; done
[ -n "$launch" ] || launch="launch/run.sh -np $np"
bin=${DDPBENCH_BIN:-}
[ -z "$bin" ] && for b in build/gpu/ddpbench build/dev/ddpbench; do [ -x "$b" ] && { bin=$b; break; }; done
[ -n "$bin" ] || die "not built yet: run launch/setup.sh first"
export DDPBENCH_BIN=$bin
# each run labels its side (side=A, side=B), so that compare, the CSV rows and plot.py name the sides; a ddpbench
# older than --label gets none (plot.py then names the sides by their folders, a/ and b/)
label_ok=0
help_text=$("$bin" --help 2>/dev/null || true)
[[ "$help_text" == *--label* ]] && label_ok=1
# side_env FILE DIR ARRAY: fills ARRAY with the side's environment, KEY=VALUE (env file first, then the
# library folder prepended to LD_LIBRARY_PATH). Runs in this shell, so that a bad line stops the script.
side_env() {
  local file=$1 ld=$2 line key lineno=0
  local -n dest=$3
  dest=()
  if [ -n "$file" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      lineno=$((lineno + 1))
      line=${line%$'\r'}
      [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
      key=${line%%=*}
      [[ "$line" == *=* && "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "$file:$lineno: not KEY=VALUE: $line"
      dest+=("$line")
    done <"$file"
  fi
  [ -z "$ld" ] || dest+=("LD_LIBRARY_PATH=$(cd "$ld" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
}
side_env "$a_env" "$a_ld" env_a
side_env "$b_env" "$b_ld" env_b

[ -n "$out" ] || out=results/ab-$(date -u +%Y%m%dT%H%M%SZ)
[ -e "$out" ] && die "$out exists: results are never overwritten; choose another --out"
mkdir -p "$out/a" "$out/b"
printf '%s\n' "${env_a[@]}" >"$out/a.env"
printf '%s\n' "${env_b[@]}" >"$out/b.env"

# run_one SIDE I: one ddpbench run with the side's environment; Open MPI forwards the side's keys to remote
# ranks too (mca_base_env_list is the environment form of mpirun -x).
run_one() {
  local side=$1 i=$2 json log keys="" kv label=()
  shift 2
  # A/A: no label, since both sides are one stack and compare.json must say so (same provenance) to serve as --noise
  [ "$label_ok" = 1 ] && [ "$aa" = 0 ] && label=(--label "side=${side^^}")
  local -n envs=env_$side
  json=$(printf '%s/%s/run-%02d.json' "$out" "$side" "$i")
  log=${json%.json}.log
  for kv in "${envs[@]}"; do keys="$keys${keys:+;}${kv%%=*}"; done
  [ -n "${OMPI_MCA_mca_base_env_list:-}" ] && keys="$OMPI_MCA_mca_base_env_list${keys:+;}$keys"
  echo "$side $i $(date -u +%H:%M:%S)" >>"$out/order.txt"
  printf 'ab.sh: run %2d of side %s -> %s\n' "$i" "$side" "$json" >&2
  # shellcheck disable=SC2086
  if ! env "${envs[@]}" ${keys:+OMPI_MCA_mca_base_env_list="$keys"} $launch "$@" "${label[@]}" --json "$json" --quiet \
      >"$log" 2>&1; then
    echo "ab.sh: run $i of side $side failed; its output:" >&2
    tail -20 "$log" >&2
    exit 3
  fi
}

shift_args=("$@")
for i in $(seq 1 "$n"); do
  if [ $((i % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
  for side in $order; do run_one "$side" "$i" "${shift_args[@]}"; done
done

rc=0
# shellcheck disable=SC2086
"$bin" compare $cmp_args "$out/a" -- "$out/b" | tee "$out/compare.txt" || rc=${PIPESTATUS[0]}
# shellcheck disable=SC2086
"$bin" compare $cmp_args --format json "$out/a" -- "$out/b" >"$out/compare.json" || true
[ "$aa" = 1 ] && echo "ab.sh: A/A noise floor recorded in $out/compare.json (pass it as compare --noise)" >&2
exit "$rc"
