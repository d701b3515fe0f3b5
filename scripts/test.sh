#!/usr/bin/env bash
# Sets up and builds GPUkit (scripts/setup.sh), then runs every test: a
# bounded fuzzing run of the text parser, then through ctest the GoogleTest
# suites (GPU tests skip themselves without a GPU), the examples and the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir="${GPUKIT_BUILD_DIR:-build}"
export GPUKIT_CACHE_DIR="$PWD/$build_dir/test-kernel-cache"
if [ -x fuzz/run.sh ]; then
  bash fuzz/run.sh 30
fi
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)"
