#!/usr/bin/env bash
# Packs what bench/gpu/device.sh needs on a GPU machine that has no Node.js, into one folder
# (default bench/results/gpu-carry, ignored by git) to carry there beside the repository:
#   node.xz            this machine's node binary, xz-compressed
#   runtime.tar.xz     dist/ (the built project, no tests or source maps) and the production
#                      node_modules (binaryen without its command-line tools)
#   work.tar.xz        the prepared GPU benchmark (node dist/bench/gpu/prepare.js)
#   matrices/          the real graphs bench/exec.ts runs through the runtime
#   bench/gpu/pack.sh [WORK [CARRY]]
# Needs `npm run build` and prepare.js first; fails if anything is missing or if the whole is
# over the 60 MB that leaves room for the repository within a 64 MiB carry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$root/bench/results/gpu-work}"
carry="${2:-$root/bench/results/gpu-carry}"
matrices="${MATRICES:-$root/../shared/data/matrices}"
graphs="${GRAPHS:-jazz.mtx cora.cites ca-GrQc.mtx facebook_combined.txt luxembourg_osm.mtx}"

fail() {
  echo "bench/gpu/pack.sh: $*" >&2
  exit 1
}
[ -s "$work/jobs.txt" ] || fail "no prepared work in '$work' (node dist/bench/gpu/prepare.js)"
[ -f "$root/dist/cli/main.js" ] || fail "no dist/ (npm run build)"
[ -f "$root/dist/bench/exec.js" ] || fail "no dist/bench/exec.js (npm run build)"
node="$(command -v node)" || fail "no node on PATH"

rm -rf "$carry"
mkdir -p "$carry/matrices"
for g in $graphs; do
  [ -f "$matrices/$g" ] || fail "missing matrix $matrices/$g"
  cp "$matrices/$g" "$carry/matrices/"
done
xz -T0 -6 -c "$node" > "$carry/node.xz"
# The production dependencies, as npm resolves them (binaryen's bin/ holds its CLI tools, unused).
mapfile -t deps < <(cd "$root" && npm ls --omit=dev --all --parseable 2> /dev/null | sed "s|^$root/||" | grep '^node_modules/' |
  awk -F/ '{ print $1 "/" $2 ($2 ~ /^@/ ? "/" $3 : "") }' | sort -u)
[ ${#deps[@]} -gt 0 ] || fail "npm ls listed no production dependencies (npm ci first)"
(cd "$root" && tar cf - --exclude='dist/test' --exclude='*.map' --exclude='node_modules/binaryen/bin' dist package.json "${deps[@]}") |
  xz -T0 -6 > "$carry/runtime.tar.xz"
# Not what a dry run built there (run.sh builds afresh for the GPU it finds).
(cd "$(dirname "$work")" && tar cf - --exclude='*/cuda/dype_check' --exclude='*/cuda/dype_abi_check' --exclude='*/cuda/*.so' \
  --exclude='*/cusparse_bench' --exclude='*/gen' "$(basename "$work")") | xz -T0 -6 > "$carry/work.tar.xz"
total="$(du -sb "$carry" | cut -f1)"
ls -l "$carry" "$carry/matrices"
echo "carry: $carry, $((total / 1000000)) MB"
[ "$total" -le 60000000 ] || fail "$carry is $((total / 1000000)) MB, over 60 MB"
