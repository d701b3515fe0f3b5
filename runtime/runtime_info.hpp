// describe_runtime(): the report printed by `gpukit info` — what GPUkit
// found (driver, NVRTC, GPUs), which backend it chose and why, and the
// state of the kernel cache.
//
//   llvm::outs() << rt::describe_runtime();
//
// It initialises the Runtime (printing the fallback line if there is one).
#pragma once

#include <string>

namespace gpukit::rt {

/// Several lines of "Label:  value" text, ending in a newline.
std::string describe_runtime();

} // namespace gpukit::rt
