#!/usr/bin/env bash
# Collects the test, example, bench and CLI binaries of a Release build into
# build-gpu/ (git-ignored, a few tens of MiB) for scripts/gpu_run.sh on a
# GPU machine.   bash scripts/gpu_bundle.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rm -rf "$root/build-gpu"
mkdir -p "$root/build-gpu"/{tests,bench,examples,tools}
for f in "$build"/tests/gpukit_*_tests "$build"/bench/* "$build"/examples/* "$build"/tools/gpukit; do
  [ -f "$f" ] && [ -x "$f" ] || continue
  dest="$root/build-gpu/$(basename "$(dirname "$f")")/$(basename "$f")"
  strip -o "$dest" "$f"
done
echo "$root" > "$root/build-gpu/SOURCE_DIR"
echo "$build" > "$root/build-gpu/BINARY_DIR"
du -sh "$root/build-gpu"
