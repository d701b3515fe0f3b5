#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (in their own build directory) and
# runs each on its seed corpus for a bounded time. Exits non-zero on a crash,
# a hang (-timeout), a leak or a failed invariant.
#
#   fuzz/run.sh            # 60 s per target
#   fuzz/run.sh 10         # 10 s per target
#
# GPUKIT_FUZZ_BUILD_DIR overrides the build directory (default build-fuzz);
# GPUKIT_FUZZ_CXX the compiler (default clang++-14, else clang++).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPUKIT_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-60}
cxx=${GPUKIT_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}
if [[ -z "$cxx" ]]; then
  echo "fuzz/run.sh: clang++ not found (apt-get install clang)" >&2
  exit 1
fi

mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUKIT_BUILD_FUZZ=ON -DGPUKIT_BUILD_TESTS=OFF -DGPUKIT_BUILD_BENCH=OFF \
  -DGPUKIT_BUILD_EXAMPLES=OFF > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target gpukit_parser_fuzzer gpukit_npy_fuzzer

# New inputs go to a scratch directory, never into the checked-in corpus.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parser" "$work/npy"

# Crashing inputs are kept in $build/fuzz-artifacts for reproduction:
#   $build/fuzz/gpukit_parser_fuzzer $build/fuzz-artifacts/crash-...
mkdir -p "$build/fuzz-artifacts"
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
       -artifact_prefix="$build/fuzz-artifacts/")
"$build/fuzz/gpukit_parser_fuzzer" "${flags[@]}" -dict="$root/fuzz/gk.dict" \
  "$work/parser" "$root/fuzz/corpus"
"$build/fuzz/gpukit_npy_fuzzer" "${flags[@]}" "$work/npy" "$root/fuzz/npy_corpus"
echo "fuzz/run.sh: no crash, hang or leak in ${seconds} s per target"
