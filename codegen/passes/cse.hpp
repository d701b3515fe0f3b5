// Common subexpression elimination: nodes with the same operation, type,
// attribute (input, scalar or function number; literal bits) and operands
// are computed once.
//
//   ir::Program p = eliminate_common_subexpressions(fold_constants(typed));
//
// Literals compare by bit pattern, so -0.0 and +0.0 stay distinct. User
// functions are taken to be pure: two calls with the same arguments merge.
// Operands are not reordered (a + b and b + a stay two nodes).
#pragma once

#include "codegen/ir.hpp"

namespace gpukit::ir {

/// `program` with structurally equal nodes merged into the first of them.
Program eliminate_common_subexpressions(const Program& program);

} // namespace gpukit::ir
