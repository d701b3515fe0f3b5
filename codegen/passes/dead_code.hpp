// Dead code removal: drops every node no output depends on.
//
//   ir::Program p = remove_dead_nodes(eliminate_common_subexpressions(folded));
//
// The program's inputs, scalars and outputs are kept even when unused, so
// the kernel's parameter list (and the caller's arguments) do not change.
#pragma once

#include "codegen/ir.hpp"

namespace gpukit::ir {

/// `program` without the nodes that reach no output, the rest in order.
Program remove_dead_nodes(const Program& program);

/// Whether each node of `program` reaches an output.
std::vector<bool> live_nodes(const Program& program);

} // namespace gpukit::ir
