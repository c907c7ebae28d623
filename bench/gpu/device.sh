#!/usr/bin/env bash
# One call on a GPU machine with nvcc, cuSPARSE and python3 but no Node.js, from the repository
# root, with what bench/gpu/pack.sh made here carried beside it:
#   bench/gpu/device.sh [CARRY]          (default bench/results/gpu-carry)
# 1. unpacks node, the built project and the prepared benchmark;
# 2. bench/gpu/run.sh: every example's generated CUDA built for this GPU, checked against the
#    float64 references and timed against cuSPARSE (C++), then under compute-sanitizer;
#    meanwhile (CPU only) compiles and builds the gcn project with `dype build --real`;
# 3. bench/exec.ts --real: the runtime's GPU path, the stage engine running gcn's partitions
#    over wasm and the real CUDA library on real graphs, each result checked against the
#    all-CPU one, measured against the h200-cpu system's predictions, and host <-> GPU copies;
# 4. writes $OUT (else bench/results/gpu-device): summary.txt (every step's status and the
#    reports), results.tar.xz (every log, CSV and JSON), gpu.txt (nvidia-smi).
# The device's time is short, so a time budget (BUDGET seconds, default 540) bounds the run:
# run.sh starts no untimed check (ABI, sanitizer) past DEADLINE (default BUDGET - 170 s into
# it) and names those it did not run; bench/exec.ts gets what is left (at least 60 s) as its
# time limit. The exit status is the first failing step's, 0 when all passed.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
carry="$(cd "${1:-$root/bench/results/gpu-carry}" && pwd)" || exit 1
out="${OUT:-$root/bench/results/gpu-device}"
res="$(mktemp -d)"
tools="$(mktemp -d)"
mkdir -p "$out"
status=0
step() { # name command...: runs a step, records its exit status and time in the summary
  local name="$1" t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "== $name: exit $rc, $((SECONDS - t0)) s (at ${SECONDS} s)" | tee -a "$res/steps.txt"
  [ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
  return $rc
}
pack_results() {
  cat "$res/steps.txt" "$res/gpu/summary.txt" "$res/exec.log" > "$out/summary.txt" 2> /dev/null
  tar cJf "$out/results.tar.xz" -C "$res" --exclude=./exec/exec-gcn . 2> /dev/null
}
trap pack_results EXIT

{
  nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  nvcc --version
  nproc
  python3 -c 'import numpy, scipy; print("numpy", numpy.__version__, "scipy", scipy.__version__)'
} > "$out/gpu.txt" 2>&1

unpack() {
  xz -dc "$carry/node.xz" > "$tools/node" && chmod +x "$tools/node" &&
    tar xJf "$carry/runtime.tar.xz" -C "$root" &&
    mkdir -p "$root/bench/results" && tar xJf "$carry/work.tar.xz" -C "$root/bench/results" &&
    "$tools/node" --version
}
step unpack unpack || exit 1
export PATH="$tools:$PATH"
export DYPE_CACHE_DIR="$tools/cache"

# CPU work beside run.sh's builds: the gcn project's real CUDA library, into the build cache
# that bench/exec.ts's own `dype build --real` then finds.
prebuild() {
  node "$root/dist/cli/main.js" compile "$root/examples/gcn.dy" -o "$res/exec/exec-gcn" --targets wasm,cuda &&
    node "$root/dist/cli/main.js" build "$res/exec/exec-gcn" --real
}
prebuild > "$res/prebuild.log" 2>&1 &
pre=$!

budget="${BUDGET:-540}"
DEADLINE="${DEADLINE:-$((budget - 170))}" PARALLEL_JOBS="${PARALLEL_JOBS:-8}" JOB_TIMEOUT="${JOB_TIMEOUT:-240}" \
  step run.sh bash "$root/bench/gpu/run.sh" "$root/bench/results/gpu-work" "$res/gpu"
pack_results
step prebuild wait $pre
left=$((budget - SECONDS))
[ $left -ge 60 ] || left=60
step exec timeout $left node "$root/dist/bench/exec.js" --real --system "$root/systems/h200-cpu.json" \
  --matrices "$carry/matrices" --graphs "$(cd "$carry/matrices" && ls | paste -sd,)" \
  --threads 8 --out "$res/exec" > "$res/exec.log" 2>&1
echo "== total ${SECONDS} s, exit $status" >> "$res/steps.txt"
exit $status
