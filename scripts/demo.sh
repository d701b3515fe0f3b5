#!/usr/bin/env bash
# Sets up and builds GPUkit (scripts/setup.sh), then runs the main demo: on
# the GPU when one is present, else on the CPU fallback. Extra arguments go to
# `gpukit demo` (try --dump).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
"${GPUKIT_BUILD_DIR:-build}/tools/gpukit" demo "$@"
