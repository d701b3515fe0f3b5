// GPUKIT_DUMP: shows each generated kernel's CUDA source when it is first
// built. GPUKIT_DUMP=1 prints it to stderr; GPUKIT_DUMP=<dir> writes
// <dir>/<kernel name>.cu (the directory is created).
//
//   GPUKIT_DUMP=1 ./saxpy            # the source on stderr
//   GPUKIT_DUMP=/tmp/kernels ./saxpy  # /tmp/kernels/ew_7c1f09a2.cu
//
// The variable is read at every build, so tests can set it in-process.
#pragma once

#include <string_view>

namespace gpukit::detail {

/// Dumps `source` as GPUKIT_DUMP asks; does nothing when it is unset, empty or "0".
void dump_kernel(std::string_view name, std::string_view source);

} // namespace gpukit::detail
