// The names the text language knows: element types, elementwise functions,
// reductions and named constants, and the "did you mean" suggestion that
// unknown names get.
//
//   if (const FunctionInfo* f = find_function("sin")) ... f->op == ir::Op::Sin
//   std::string hint = did_you_mean("sinn", function_names());  // "; did you mean 'sin'?"
#pragma once

#include "codegen/dtype.hpp"
#include "codegen/ir.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::text {

/// "f32", "bf16", ... and the long spellings "float32", "bfloat16", "bool".
std::optional<DType> find_dtype(std::string_view name);
/// The short names, in DType order.
std::vector<std::string_view> dtype_names();

enum class FunctionKind : uint8_t {
  Elementwise, ///< one IR operation
  Reduction,   ///< over every element or one axis (lower_reduction.cpp)
};

struct FunctionInfo {
  std::string_view name;
  FunctionKind kind;
  ir::Op op;    ///< Elementwise only
  int min_args; ///< positional array arguments
  int max_args;
};

/// The function called `name` in text programs, or nullptr.
const FunctionInfo* find_function(std::string_view name);
/// Every function and reduction name, sorted.
std::vector<std::string_view> function_names();

/// Words that cannot name a value: true, false, inf, nan, let, and type names.
bool is_reserved(std::string_view name);

/// Names a kernel parameter may not take (C++/CUDA words the emitted source
/// uses, s<k>/t<k>, n, i). The same rule as the C++ DSL's (dsl/expression_kernel.cpp),
/// so a text program and its C++ twin name their parameters alike.
bool is_reserved_kernel_name(std::string_view name);
/// codegen::has_reserved_prefix: no suffix makes such a name a free kernel parameter.
bool has_reserved_prefix(std::string_view name);

/// "; did you mean 'x'?" naming the candidate closest to `name` by edit
/// distance, or "" when none is close enough to be a plausible typo.
std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates);

} // namespace gpukit::text
