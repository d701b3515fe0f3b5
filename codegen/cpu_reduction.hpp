// The CPU back end of reductions: evaluates a ReductionPlan
// (codegen/reduction.hpp) on the host over a row-major [outer, extent,
// inner] view, with the semantics listed in codegen/reduction.cpp. It is the
// fallback without a GPU and the reference the GPU tests compare against.
//
//   codegen::ReductionArgs args{{{"x", x.data()}, {"y", y.data()}}, {}, {}};
//   codegen::evaluate_reduction(plan, {1, n, 1}, args, &result);
//
// Elements are combined sequentially in index order (the GPU's order
// differs: float results agree to rounding, integers exactly).
#pragma once

#include "codegen/reduction.hpp"

#include <string>
#include <utility>
#include <vector>

namespace gpukit::codegen {

struct ReductionGeometry {
  long long outer = 1, extent = 0, inner = 1;
};

struct ReductionArgs {
  /// Arrays by the programs' input names (storage types).
  std::vector<std::pair<std::string, const void*>> inputs;
  /// Inputs (by name) of shape [extent] read at the column index of every
  /// row (Row plans only).
  std::vector<std::string> column_inputs;
  /// The user's scalars by name ("s0", ...).
  std::vector<std::pair<std::string, ir::Constant>> scalars;
};

/// Writes the plan's result to `dst`: outer * inner values of the last
/// stage's result type, or with an epilogue of the output's type: outer *
/// inner values (EpilogueScope::Group, reading its operands at the
/// result's index) or outer * extent elements (Element). Throws Error{Usage} for argmin/argmax over an
/// empty extent and for a missing input or scalar.
void evaluate_reduction(const ir::ReductionPlan& plan, const ReductionGeometry& g,
                        const ReductionArgs& args, void* dst);

} // namespace gpukit::codegen
