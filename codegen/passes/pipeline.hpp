// The optimisation pipeline every front end runs before a back end.
//
//   ir::Program p = optimize(program);   // typed, folded, deduplicated, no dead nodes
//   CudaKernel k = emit_cuda(p, options);  // or cpu::evaluate(p, ...)
#pragma once

#include "codegen/ir.hpp"

namespace gpukit::ir {

/// infer_types, fold_constants, eliminate_common_subexpressions, remove_dead_nodes.
Program optimize(const Program& program);

} // namespace gpukit::ir
