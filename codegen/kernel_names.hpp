// Names a kernel parameter may not take: C++ and CUDA words, the names the
// emitters give their own values (n, i, s0.., t0.., the reduction stage
// values r0..), and the prefixes they reserve (__, gpukit, gk_). Both front
// ends rename operands that collide.
//
//   if (is_reserved_kernel_name(name)) name += "_in";
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>

#include <string>
#include <string_view>

namespace gpukit::codegen {

bool is_reserved_kernel_name(std::string_view name);

/// Whether `name` starts with a prefix the emitters keep for themselves
/// (__, gpukit, gk_): the text language refuses such names.
bool has_reserved_prefix(std::string_view name);

/// The kernel parameter name for an operand called `name`, as both front
/// ends choose it: `name` when it is free; `prefix + name` when it starts
/// with a reserved prefix or r<digit> (no suffix would free those); then
/// with `suffix`, `suffix`2, ... appended while the name is reserved or
/// `taken` (names already given to other parameters).
std::string free_kernel_name(std::string_view name, std::string_view prefix, std::string_view suffix,
                             llvm::function_ref<bool(const std::string&)> taken);

} // namespace gpukit::codegen
