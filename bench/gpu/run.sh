#!/usr/bin/env bash
# GPU side of the benchmark, one call on a machine with an NVIDIA GPU, nvcc, make and python3
# with CuPy (no Node.js needed):
#   bench/gpu/run.sh [--dry-run] [WORK [OUT]]
# WORK is what `node dist/bench/gpu/prepare.js` wrote (default bench/results/gpu-work);
# OUT (default $OUT, else bench/results/gpu) receives build logs, dype_check logs and CSVs,
# cusparse.json and summary.txt. Builds each example's generated CUDA for the GPU it finds,
# runs dype_check on every example and matrix (every variant checked against the float64
# reference, then timed: median of 20 after 3 warm-ups) and dype_abi_check (the same checks
# through the native ABI, whole and split over 2 and 3 instances), runs every job's checks under
# compute-sanitizer (memcheck and racecheck), then times SpMV and SpMM through CuPy (cuSPARSE) on
# the same matrices and inputs, and reports the variant dype picks for each op (picks.txt) beside
# the fastest one measured. Matrices listed in WORK/generated.txt (10^7 entries and more, too
# large to carry) are generated here first by generate.py (NumPy and SciPy), beside the builds,
# into WORK/gen; their jobs run dype_check and dype_abi_check but not compute-sanitizer (hours
# at that size), which the summary says per job.
#
# Strict: any missing piece (work folder, jobs.txt, picks.txt or a job's pick, a project, an
# input or reference file, a tool), any failed build, check or Python step, or a job over its
# time limit (JOB_TIMEOUT seconds, default 900) makes the exit status non-zero; nothing is
# skipped silently.
# --dry-run (no GPU needed): checks every piece it needs is present (the work, nvcc, make, and
# for generated matrices python3 with NumPy and SciPy; not the driver, compute-sanitizer or CuPy)
# and builds every project with nvcc (for ARCH, default 90), then stops; it generates nothing and
# runs nothing on a device.
set -euo pipefail

dry=0
if [ "${1:-}" = "--dry-run" ]; then
  dry=1
  shift
fi
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$here/../results/gpu-work}"
out="${2:-${OUT:-$here/../results/gpu}}"
job_timeout="${JOB_TIMEOUT:-900}"

fail() {
  echo "bench/gpu/run.sh: $*" >&2
  exit 1
}

# ---- every piece, before anything runs
[ -d "$work" ] || fail "no work folder '$work' (run node dist/bench/gpu/prepare.js first)"
work="$(cd "$work" && pwd)"
[ -s "$work/jobs.txt" ] || fail "no jobs in '$work/jobs.txt'"
[ -s "$work/picks.txt" ] || fail "no picks in '$work/picks.txt' (the variants dype picks; run prepare.js)"
for tool in nvcc make timeout; do
  command -v "$tool" > /dev/null || fail "'$tool' is not on PATH"
done
if [ $dry -eq 0 ]; then
  command -v nvidia-smi > /dev/null || fail "'nvidia-smi' is not on PATH (no NVIDIA driver?)"
  sanitizer="$(command -v compute-sanitizer || true)"
  [ -n "$sanitizer" ] || sanitizer="$(dirname "$(command -v nvcc)")/compute-sanitizer"
  [ -x "$sanitizer" ] || fail "compute-sanitizer is neither on PATH nor beside nvcc"
  python3 -c 'import cupy, cupyx.scipy.sparse' > /dev/null 2>&1 || fail "python3 cannot import CuPy (the cuSPARSE baseline)"
  [ -f "$here/cusparse.py" ] || fail "missing $here/cusparse.py"
fi
generated=0
if [ -s "$work/generated.txt" ]; then
  generated=1
  [ -f "$here/generate.py" ] || fail "missing $here/generate.py (the generated matrices)"
  python3 -c 'import numpy, scipy.sparse' > /dev/null 2>&1 || fail "python3 cannot import NumPy and SciPy (the generated matrices)"
fi
examples="$(cut -d' ' -f1 "$work/jobs.txt" | sort -u)"
missing=0
for ex in $examples; do
  [ -f "$work/$ex/cuda/Makefile" ] || { echo "missing project $work/$ex/cuda" >&2; missing=1; }
done
while read -r ex matrix args; do
  [ -n "$ex" ] || continue
  grep -q "^$ex $matrix " "$work/picks.txt" || { echo "$ex $matrix: no pick in $work/picks.txt" >&2; missing=1; }
  # shellcheck disable=SC2086
  set -- $args
  while [ $# -gt 0 ]; do
    case "$1" in
      --input | --ref)
        f="${2#*=}"
        # gen/ is written by generate.py (checked once it has run).
        case "$f" in
          gen/*) [ $generated -eq 1 ] || { echo "$ex $matrix: $f is generated, but $work/generated.txt lists nothing" >&2; missing=1; } ;;
          *) [ -f "$work/$f" ] || { echo "$ex $matrix: missing $1 file $work/$f" >&2; missing=1; } ;;
        esac
        shift 2
        ;;
      *) shift ;;
    esac
  done
done < "$work/jobs.txt"
[ $missing -eq 0 ] || fail "pieces are missing (above)"

mkdir -p "$out/logs" "$out/csv"
if [ $dry -eq 1 ]; then
  arch="${ARCH:-90}"
  echo "dry run: every piece present; building every project for sm_$arch (no device used)" | tee "$out/summary.txt"
else
  arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')"
  [ -n "$arch" ] || fail "nvidia-smi reports no GPU"
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) (sm_$arch)" | tee "$out/summary.txt"
fi

status=0
# ---- the generated matrices, beside the builds (CPU work while nvcc runs)
gen_pid=
if [ $generated -eq 1 ] && [ $dry -eq 0 ]; then
  timeout "$job_timeout" python3 "$here/generate.py" "$work" > "$out/logs/generate.log" 2>&1 &
  gen_pid=$!
fi
# ---- builds, two at a time
pids=()
names=()
for ex in $examples; do
  timeout "$job_timeout" make -B -C "$work/$ex/cuda" ARCHS="-gencode arch=compute_$arch,code=sm_$arch" > "$out/logs/build-$ex.log" 2>&1 &
  pids+=($!)
  names+=("$ex")
  if [ ${#pids[@]} -ge 2 ]; then
    if ! wait "${pids[0]}"; then echo "build of ${names[0]} failed (see logs/build-${names[0]}.log)" | tee -a "$out/summary.txt"; status=1; fi
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for n in "${!pids[@]}"; do
  if ! wait "${pids[$n]}"; then echo "build of ${names[$n]} failed (see logs/build-${names[$n]}.log)" | tee -a "$out/summary.txt"; status=1; fi
done
if [ $dry -eq 1 ]; then
  [ $status -eq 0 ] && echo "dry run: every project built" | tee -a "$out/summary.txt"
  exit $status
fi

if [ -n "$gen_pid" ]; then
  if wait "$gen_pid"; then
    tee -a "$out/summary.txt" < "$out/logs/generate.log"
  else
    echo "generate.py failed (see logs/generate.log)" | tee -a "$out/summary.txt"
    exit 1
  fi
  while read -r ex matrix args; do
    for f in $args; do
      case "$f" in
        *=gen/*) [ -e "$work/${f#*=}" ] || fail "$ex $matrix: generate.py wrote no $work/${f#*=}" ;;
      esac
    done
  done < "$work/jobs.txt"
fi

# ---- checks and timings, each job under its time limit
while read -r ex matrix args; do
  [ -n "$ex" ] || continue
  for tool in dype_check dype_abi_check; do
    bin="$work/$ex/cuda/$tool"
    log="$out/logs/${tool#dype_}-$ex-$matrix.log"
    if [ ! -x "$bin" ]; then echo "$ex $matrix: $tool not built" | tee -a "$out/summary.txt"; status=1; continue; fi
    extra=()
    [ "$tool" = dype_check ] && extra=(--reps 20 --warmup 3 --csv "$out/csv/$ex-$matrix.csv")
    rc=0
    # shellcheck disable=SC2086
    (cd "$work" && timeout "$job_timeout" "$bin" $args "${extra[@]}") > "$log" 2>&1 || rc=$?
    [ $rc -ne 124 ] || echo "$ex $matrix: $tool exceeded ${job_timeout}s" >> "$log"
    echo "$ex $matrix: $tool exit $rc ($(tail -1 "$log"))" | tee -a "$out/summary.txt"
    [ $rc -eq 0 ] || status=1
  done
done < "$work/jobs.txt"

# ---- every example under compute-sanitizer (memcheck, racecheck), checks only, on each job's data
while read -r ex matrix args; do
  [ -n "$ex" ] || continue
  case "$args" in
    *=gen/*)
      echo "$ex $matrix: compute-sanitizer not run (a generated matrix of 10^7 entries; the same kernels run under it on the real matrices)" | tee -a "$out/summary.txt"
      continue
      ;;
  esac
  for tool in memcheck racecheck; do
    log="$out/logs/$tool-$ex-$matrix.log"
    rc=0
    # shellcheck disable=SC2086
    (cd "$work" && timeout "$job_timeout" "$sanitizer" --tool "$tool" --error-exitcode 99 "$work/$ex/cuda/dype_check" $args --check-only) > "$log" 2>&1 || rc=$?
    echo "$ex $matrix: compute-sanitizer $tool exit $rc ($(tail -1 "$log"))" | tee -a "$out/summary.txt"
    [ $rc -eq 0 ] || status=1
  done
done < "$work/jobs.txt"

rc=0
timeout "$job_timeout" python3 "$here/cusparse.py" "$work" "$out" > "$out/logs/cusparse.log" 2>&1 || rc=$?
tee -a "$out/summary.txt" < "$out/logs/cusparse.log"
if [ $rc -ne 0 ]; then echo "cusparse.py exit $rc" | tee -a "$out/summary.txt"; status=1; fi
exit $status
