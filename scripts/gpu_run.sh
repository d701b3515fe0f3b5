#!/usr/bin/env bash
# Runs the GPU tests, examples and benchmarks on a GPU machine from a bundle
# of prebuilt binaries (scripts/gpu_bundle.sh makes it), writing logs and
# JSON results to $OUT (default ./gpu-results). The binaries were built here
# with their source and build directories compiled in, so both are linked
# into place first.
#   bash scripts/gpu_run.sh [tests|bench|all]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-results}
mode=${1:-all}
mkdir -p "$out"
src_dir=$(cat "$root/build-gpu/SOURCE_DIR")
bin_dir=$(cat "$root/build-gpu/BINARY_DIR")
if [ "$src_dir" != "$root" ]; then mkdir -p "$(dirname "$src_dir")"; ln -sfn "$root" "$src_dir"; fi
ln -sfn "$root/build-gpu" "$bin_dir" 2>/dev/null || true
b=$bin_dir
export GPUKIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1

if [ "$mode" = tests ] || [ "$mode" = all ]; then
  : > "$out/tests.txt"
  for t in "$b"/tests/gpukit_*_tests; do
    echo "== $(basename "$t")" >> "$out/tests.txt"
    "$t" --gtest_brief=1 >> "$out/tests.txt" 2>&1
    echo "exit $?" >> "$out/tests.txt"
  done
  for ex in saxpy black_scholes custom_function softmax layernorm; do
    [ -x "$b/examples/$ex" ] && { "$b/examples/$ex" >> "$out/tests.txt" 2>&1; echo "$ex exit $?" >> "$out/tests.txt"; }
  done
  for gk in saxpy black_scholes gelu; do
    "$b/tools/gpukit" run "$root/examples/$gk.gk" --size N=1000000 >> "$out/tests.txt" 2>&1; echo "$gk.gk exit $?" >> "$out/tests.txt"
  done
  for gk in softmax layernorm; do
    "$b/tools/gpukit" run "$root/examples/$gk.gk" --size R=512 --size C=1024 >> "$out/tests.txt" 2>&1; echo "$gk.gk exit $?" >> "$out/tests.txt"
  done
  grep -E "^== |PASSED|FAILED|exit|SKIPPED \]" "$out/tests.txt" | grep -v "^\[  SKIPPED \] [A-Z]" | head -80
fi

if [ "$mode" = bench ] || [ "$mode" = all ]; then
  cold=$(mktemp -d)
  GPUKIT_CACHE_DIR=$cold "$b/bench/elementwise_bench" --first-call > "$out/first_call.jsonl" 2>&1
  GPUKIT_CACHE_DIR=$cold "$b/bench/elementwise_bench" --first-call >> "$out/first_call.jsonl" 2>&1
  cat "$out/first_call.jsonl"
  "$b/bench/elementwise_bench" --out "$out/elementwise.json" 2>&1 | tee "$out/bench.txt"
  [ -x "$b/bench/reduction_bench" ] && "$b/bench/reduction_bench" --out "$out/reduction.json" 2>&1 | tee -a "$out/bench.txt"
  [ -x "$b/bench/column_bench" ] && "$b/bench/column_bench" --out "$out/column.json" > "$out/column.txt" 2>&1
  # The text front end builds the same kernels: the same speed through the CLI.
  "$b/tools/gpukit" bench "$root/examples/softmax.gk" --size R=8192 --size C=4096 2>&1 | tee -a "$out/bench.txt"
  "$b/tools/gpukit" bench -e 'x: f32[R, C]
s = sum(x, axis=0)' --size R=4096 --size C=8192 2>&1 | tee -a "$out/bench.txt"
  [ -x "$b/bench/dispatch_bench" ] && "$b/bench/dispatch_bench" --out "$out/dispatch.json" 2>&1 | tail -12 | tee -a "$out/bench.txt"
  [ -x "$b/bench/qos_bench" ] && "$b/bench/qos_bench" --out "$out/qos.json" 2>&1 | tail -8 | tee -a "$out/bench.txt"
  (cd "$root" && PYTHONUNBUFFERED=1 timeout 300 python3 bench/peers.py --out "$out/peers.json" 2>&1 | tail -30 | tee "$out/peers.txt")
fi

if [ "$mode" = tune ] || [ "$mode" = all ]; then
  # Issue 7's flow: tune once, then a new process uses the stored winner.
  export GPUKIT_CACHE_DIR=$(mktemp -d)
  "$b/tools/gpukit" tune "$root/examples/black_scholes.gk" --size N=67108864 2>&1 | tee "$out/tune.txt"
  "$b/tools/gpukit" bench "$root/examples/black_scholes.gk" --size N=67108864 --explain 2>&1 | tee -a "$out/tune.txt"
fi
