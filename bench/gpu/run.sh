#!/usr/bin/env bash
# GPU side of the benchmark, one call on a machine with an NVIDIA GPU, nvcc, make, cuSPARSE and
# python3 (no Node.js needed):
#   bench/gpu/run.sh [--dry-run] [WORK [OUT]]
# WORK is what `node dist/bench/gpu/prepare.js` wrote (default bench/results/gpu-work);
# OUT (default $OUT, else bench/results/gpu) receives build logs, dype_check logs and CSVs,
# cusparse.json and summary.txt. Builds each example's generated CUDA for the GPU it finds, and
# cusparse_bench.cu (the cuSPARSE baseline, C++), runs dype_check on every example and matrix
# (every variant checked against the float64 reference, then timed: median of 20 after 3
# warm-ups, CUDA events around each call) and cusparse_bench on every SpMV and SpMM job
# (cuSPARSE's CSR algorithms, checked against the same reference and timed the same way,
# descriptors, buffer and preprocessing made once), one job at a time; reports (cusparse.py)
# cuSPARSE against dype's fastest variant and against the variant dype picks for the input
# (picks.txt); then, untimed and PARALLEL_JOBS (default 4) at a time, dype_abi_check on every
# job (the checks through the native ABI, whole and split over 2 and 3 instances) and every
# job's checks under compute-sanitizer (memcheck and racecheck). Matrices listed in
# WORK/generated.txt (10^7 entries and more, too large to carry) are generated here first by
# generate.py (NumPy and SciPy), beside the builds, into WORK/gen; their jobs run every check
# and timing but not compute-sanitizer (hours at that size), which the summary says per job.
#
# cuSPARSE is looked for in CUSPARSE_HOME, beside nvcc, in Python's nvidia packages, then under
# /usr and /opt (include/cusparse.h, libcusparse.so* beside it); where it is missing the rest
# still runs and the exit status is non-zero.
#
# Strict: any missing piece (work folder, jobs.txt, picks.txt or a job's pick, a project, an
# input or reference file, a tool) stops it before anything runs; any failed build, check or Python step, a job over
# its time limit (JOB_TIMEOUT seconds, default 900), or an untimed check not started because
# the run passed DEADLINE seconds (default none) makes the exit status non-zero; nothing is skipped
# silently.
# --dry-run (no GPU needed): checks every piece it needs is present (the work, nvcc, make, and
# for generated matrices python3 with NumPy and SciPy; not the driver or compute-sanitizer)
# and builds every project with nvcc (for ARCH, default 90), and cusparse_bench where cuSPARSE's
# headers are found (else it says so), then stops; it generates nothing and runs nothing on a
# device.
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
deadline="${DEADLINE:-0}"
build_jobs="${BUILD_JOBS:-$(nproc 2> /dev/null || echo 2)}"
parallel_jobs="${PARALLEL_JOBS:-4}"

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
  command -v python3 > /dev/null || fail "'python3' is not on PATH (the report, cusparse.py)"
  [ -f "$here/cusparse.py" ] || fail "missing $here/cusparse.py"
fi
[ -f "$here/cusparse_bench.cu" ] || fail "missing $here/cusparse_bench.cu"

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

# cuSPARSE: include/cusparse.h and libcusparse.so* beside it (lib64/, lib/) or in the system's
# library folders. Looked for in CUSPARSE_HOME, beside nvcc, in Python's nvidia packages, then
# anywhere under /usr and /opt. Missing in a real run: the run goes on without the baseline and
# fails at the end (cusparse.py finds no cuSPARSE figures), so the rest is still measured.
cusparse_home=
cusparse_lib=
find_cusparse() { # include folders...
  local inc
  for inc in "$@"; do
    [ -n "$inc" ] && [ -f "$inc/cusparse.h" ] || continue
    cusparse_lib="$(ls "$inc"/../lib64/libcusparse.so "$inc"/../lib/libcusparse.so "$inc"/../lib64/libcusparse.so.* "$inc"/../lib/libcusparse.so.* \
      /usr/lib/x86_64-linux-gnu/libcusparse.so* 2> /dev/null | head -1 || true)"
    if [ -n "$cusparse_lib" ]; then
      cusparse_home="$(cd "$inc/.." && pwd)"
      cusparse_lib="$(cd "$(dirname "$cusparse_lib")" && pwd)/$(basename "$cusparse_lib")"
      return 0
    fi
  done
  return 1
}
nvcc_root="$(dirname "$(command -v nvcc)")/.."
# shellcheck disable=SC2046
find_cusparse "${CUSPARSE_HOME:+$CUSPARSE_HOME/include}" "$nvcc_root/include" "$nvcc_root/targets/x86_64-linux/include" \
  $(python3 -c 'import os, nvidia; print(" ".join(os.path.join(p, d, "include") for p in nvidia.__path__ for d in ("cu13", "cu12", "cusparse")))' 2> /dev/null || true) ||
  find_cusparse $(find /usr /opt -maxdepth 7 -name cusparse.h -printf '%h\n' 2> /dev/null | sort -u || true) || true

mkdir -p "$out/logs" "$out/csv"
status=0
if [ $dry -eq 1 ]; then
  arch="${ARCH:-90}"
  echo "dry run: every piece present; building every project for sm_$arch (no device used)" | tee "$out/summary.txt"
else
  arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')"
  [ -n "$arch" ] || fail "nvidia-smi reports no GPU"
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) (sm_$arch)" | tee "$out/summary.txt"
fi

if [ -n "$cusparse_lib" ]; then
  echo "cuSPARSE: $cusparse_lib, headers $cusparse_home/include" | tee -a "$out/summary.txt"
else
  echo "cuSPARSE NOT FOUND (set CUSPARSE_HOME): cusparse_bench is not built, there is no baseline$([ $dry -eq 1 ] || echo ', and the run fails at the end')" | tee -a "$out/summary.txt"
  [ $dry -eq 1 ] || status=1
fi

# ---- the generated matrices, beside the builds (CPU work while nvcc runs)
gen_pid=
if [ $generated -eq 1 ] && [ $dry -eq 0 ]; then
  timeout "$job_timeout" python3 "$here/generate.py" "$work" > "$out/logs/generate.log" 2>&1 &
  gen_pid=$!
fi
# ---- builds, BUILD_JOBS at a time (the harness reads inputs with the generated check header of the first project)
pids=()
names=()
build() {
  if [ "$1" = cusparse_bench ]; then
    local first
    first="$(echo "$examples" | head -1)"
    local dir
    dir="$(dirname "$cusparse_lib")"
    timeout "$job_timeout" nvcc -std=c++17 -O3 -Werror all-warnings -Xcompiler -Wall,-Wextra -gencode "arch=compute_$arch,code=sm_$arch" \
      -I"$cusparse_home/include" -I"$work/$first/cuda" "$here/cusparse_bench.cu" -o "$work/cusparse_bench" \
      -Xlinker "$cusparse_lib" -Xlinker -rpath,"$dir" -Xlinker -rpath-link,"$dir"
  else
    timeout "$job_timeout" make -B -C "$work/$1/cuda" ARCHS="-gencode arch=compute_$arch,code=sm_$arch"
  fi
}
targets="$examples"
[ -z "$cusparse_lib" ] || targets="$targets cusparse_bench"
for ex in $targets; do
  build "$ex" > "$out/logs/build-$ex.log" 2>&1 &
  pids+=($!)
  names+=("$ex")
  if [ ${#pids[@]} -ge "$build_jobs" ]; then
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

# Without the generated matrices their jobs cannot run (each is named, and the status is
# non-zero); the jobs on real matrices still do.
gen_ok=1
if [ -n "$gen_pid" ]; then
  if wait "$gen_pid"; then
    tee -a "$out/summary.txt" < "$out/logs/generate.log"
  else
    echo "generate.py FAILED (see logs/generate.log): no job on a generated matrix runs" | tee -a "$out/summary.txt"
    gen_ok=0
    status=1
  fi
  while read -r ex matrix args; do
    for f in $args; do
      case "$f" in
        *=gen/*) [ $gen_ok -eq 0 ] || [ -e "$work/${f#*=}" ] || fail "$ex $matrix: generate.py wrote no $work/${f#*=}" ;;
      esac
    done
  done < "$work/jobs.txt"
fi
# Whether a job can run: not one on a generated matrix that generate.py did not make.
runnable() {
  case "$1" in
    *=gen/*) [ $gen_ok -eq 1 ] || { echo "$ex $matrix: NOT RUN (its generated matrix is missing)" | tee -a "$out/summary.txt"; return 1; } ;;
  esac
}

# ---- checks and timings, one job at a time (they time the GPU), each under its time limit
run_logged() { # log command...: runs in the work folder under the job time limit, output to log
  local log="$1" rc=0
  shift
  (cd "$work" && timeout "$job_timeout" "$@") > "$log" 2>&1 || rc=$?
  [ $rc -ne 124 ] || echo "exceeded ${job_timeout}s" >> "$log"
  return $rc
}
run_tool() { # tool binary log job-args...
  local tool="$1" bin="$2" log="$3" rc=0
  shift 3
  if [ ! -x "$bin" ]; then echo "$ex $matrix: $tool not built" | tee -a "$out/summary.txt"; status=1; return; fi
  run_logged "$log" "$bin" "$@" || rc=$?
  echo "$ex $matrix: $tool exit $rc ($(tail -1 "$log"))" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || status=1
}
while read -r ex matrix args; do
  [ -n "$ex" ] || continue
  runnable "$args" || continue
  # shellcheck disable=SC2086
  run_tool dype_check "$work/$ex/cuda/dype_check" "$out/logs/check-$ex-$matrix.log" $args --reps 20 --warmup 3 --csv "$out/csv/$ex-$matrix.csv"
  case "$ex" in
    spmv | spmm)
      # shellcheck disable=SC2086
      run_tool cusparse_bench "$work/cusparse_bench" "$out/logs/cusparse-$ex-$matrix.log" $args --reps 20 --warmup 3 --csv "$out/csv/cusparse-$ex-$matrix.csv"
      ;;
  esac
done < "$work/jobs.txt"

rc=0
timeout "$job_timeout" python3 "$here/cusparse.py" "$work" "$out" > "$out/logs/cusparse.log" 2>&1 || rc=$?
tee -a "$out/summary.txt" < "$out/logs/cusparse.log"
if [ $rc -ne 0 ]; then echo "cusparse.py exit $rc" | tee -a "$out/summary.txt"; status=1; fi

# ---- checks only, PARALLEL_JOBS at a time (nothing is timed): dype_abi_check on every job, and
# every job's dype_check under compute-sanitizer (memcheck, racecheck); none started once the run
# is past DEADLINE seconds (each such run is named)
checked() { # label log command...: runs a check, appends its line to checks.txt
  local label="$1" log="$2" rc=0
  shift 2
  run_logged "$log" "$@" || rc=$?
  echo "$label exit $rc ($(tail -1 "$log"))" >> "$out/checks.txt"
  return $rc
}
: > "$out/checks.txt"
pids=()
late=0
start() { # label log command...
  if [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
    echo "$1 NOT RUN (the run passed DEADLINE=${deadline}s)" >> "$out/checks.txt"
    late=1
    return
  fi
  checked "$@" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$parallel_jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
}
while read -r ex matrix args; do
  [ -n "$ex" ] || continue
  [ $gen_ok -eq 1 ] || case "$args" in *=gen/*) continue ;; esac
  # shellcheck disable=SC2086
  start "$ex $matrix: dype_abi_check" "$out/logs/abi_check-$ex-$matrix.log" "$work/$ex/cuda/dype_abi_check" $args
  case "$args" in
    *=gen/*)
      echo "$ex $matrix: compute-sanitizer not run (a generated matrix of 10^7 entries; the same kernels run under it on the real matrices)" >> "$out/checks.txt"
      continue
      ;;
  esac
  for tool in memcheck racecheck; do
    # shellcheck disable=SC2086
    start "$ex $matrix: compute-sanitizer $tool" "$out/logs/$tool-$ex-$matrix.log" \
      "$sanitizer" --tool "$tool" --error-exitcode 99 "$work/$ex/cuda/dype_check" $args --check-only
  done
done < "$work/jobs.txt"
for p in "${pids[@]}"; do wait "$p" || status=1; done
sort "$out/checks.txt" | tee -a "$out/summary.txt"
[ $late -eq 0 ] || status=1
exit $status
