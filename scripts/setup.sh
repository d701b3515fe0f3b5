#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build GPUkit (idempotent: a
# package already present is not touched), then configures and builds the
# Release tree in build/. The CUDA toolkit is expected at /usr/local/cuda
# (or $CUDA_PATH) for its headers and NVRTC; no GPU or driver is needed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ ccache libfmt-dev libboost-dev llvm-14-dev zlib1g-dev
          libtinfo-dev libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cuda_root="${CUDA_PATH:-/usr/local/cuda}"
if [ ! -f "$cuda_root/include/cuda.h" ] || [ ! -f "$cuda_root/include/nvrtc.h" ]; then
  echo "setup: CUDA toolkit headers not found under $cuda_root (set CUDA_PATH)" >&2
  exit 1
fi

build_dir="${GPUKIT_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKIT_CUDA_ROOT="$cuda_root" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
