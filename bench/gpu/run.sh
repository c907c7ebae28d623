#!/usr/bin/env bash
# GPU side of the benchmark, one call on a machine with an NVIDIA GPU, nvcc and make
# (python3 with CuPy for the cuSPARSE baseline; skipped, saying so, without it):
#   bench/gpu/run.sh [WORK [OUT]]
# WORK is what `node dist/bench/gpu/prepare.js` wrote (default bench/results/gpu-work);
# OUT (default $OUT, else bench/results/gpu) receives build logs, dype_check logs and CSVs,
# cusparse.json and summary.txt. Builds each example's generated CUDA for the GPU it finds,
# runs dype_check on every example and matrix (every variant checked against the float64
# reference, then timed: median of 20 after 3 warm-ups) and dype_abi_check (the same checks
# through the native ABI, whole and split over 2 and 3 instances), then times SpMV and SpMM through
# CuPy (cuSPARSE) on the same matrices and inputs.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$here/../results/gpu-work}"
out="${2:-${OUT:-$here/../results/gpu}}"
mkdir -p "$out/logs" "$out/csv"
work="$(cd "$work" && pwd)"
status=0

arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.[:space:]')"
[ -n "$arch" ] || arch=90
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1) (sm_$arch)" | tee "$out/summary.txt"

examples="$(cut -d' ' -f1 "$work/jobs.txt" | sort -u)"
pids=()
for ex in $examples; do
  ( make -B -C "$work/$ex/cuda" ARCHS="-gencode arch=compute_$arch,code=sm_$arch" > "$out/logs/build-$ex.log" 2>&1 || echo "build of $ex failed (see logs/build-$ex.log)" >> "$out/summary.txt" ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

while read -r ex matrix args; do
  [ -n "$ex" ] || continue
  bin="$work/$ex/cuda/dype_check"
  log="$out/logs/check-$ex-$matrix.log"
  if [ ! -x "$bin" ]; then echo "$ex $matrix: not built" >> "$out/summary.txt"; status=1; continue; fi
  # shellcheck disable=SC2086
  (cd "$work" && "$bin" $args --reps 20 --warmup 3 --csv "$out/csv/$ex-$matrix.csv") > "$log" 2>&1
  rc=$?
  echo "$ex $matrix: dype_check exit $rc ($(tail -1 "$log"))" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || status=1
  # The same program through the native ABI, whole and split in 2 and 3 (on as many GPUs as there are).
  abi="$work/$ex/cuda/dype_abi_check"
  log="$out/logs/abi-$ex-$matrix.log"
  # shellcheck disable=SC2086
  (cd "$work" && "$abi" $args) > "$log" 2>&1
  rc=$?
  echo "$ex $matrix: dype_abi_check exit $rc ($(tail -1 "$log"))" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || status=1
done < "$work/jobs.txt"

if python3 -c 'import cupy, cupyx.scipy.sparse' > /dev/null 2>&1; then
  python3 "$here/cusparse.py" "$work" "$out" 2>&1 | tee -a "$out/summary.txt"
else
  echo "CuPy is not importable here: no cuSPARSE baseline" | tee -a "$out/summary.txt"
fi
exit $status
