// GPUKIT_DUMP: shows each generated kernel's CUDA source when it is first
// built (and a reduction's plan before its kernels). GPUKIT_DUMP=1 prints
// them to stderr; GPUKIT_DUMP=<dir> writes <dir>/<kernel name>.cu and
// <dir>/<first kernel name>.plan (the directory is created).
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

/// Dumps a reduction plan (dsl/reduction_engine.hpp's describe_plan) under
/// the name of its first kernel, as a comment block on stderr or a .plan file.
void dump_plan(std::string_view name, std::string_view plan);

} // namespace gpukit::detail
