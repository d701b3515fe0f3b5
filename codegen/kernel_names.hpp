// Names a kernel parameter may not take: C++ and CUDA words, the names the
// emitters give their own values (n, i, s0.., t0.., the reduction stage
// values r0..), and the prefixes they reserve (__, gpukit, gk_). Both front
// ends rename operands that collide.
//
//   if (is_reserved_kernel_name(name)) name += "_in";
#pragma once

#include <string_view>

namespace gpukit::codegen {

bool is_reserved_kernel_name(std::string_view name);

/// Whether `name` starts with a reserved prefix: no suffix frees it, so
/// front ends rename such an operand with a prefix of their own.
bool has_reserved_prefix(std::string_view name);

} // namespace gpukit::codegen
