// Constant folding and exact algebraic simplification of a typed program.
//
//   ir::Program folded = fold_constants(infer_types(program));
//
// An operation whose operands are all literals becomes a literal, computed
// by the CPU evaluator's own element functions (codegen/element_semantics.hpp),
// so folding never changes an answer. Simplifications are applied only where
// they are exact for every input, NaN and -0.0 included:
//   x * 1, 1 * x, x / 1 -> x            (any type)
//   x + 0, 0 + x, x - 0 -> x            (integers and bool; for floats only
//                                        x + (-0.0), (-0.0) + x and x - (+0.0))
//   x - x -> 0                          (integers and bool)
//   x % y -> false                      (bool: y is 0 or 1)
//   -(-x) -> x, !!x -> x
//   cast<T>(x) -> x                     (x already of type T; for f16/bf16 only
//                                        when x is already rounded: an input,
//                                        a scalar or a cast to T)
//   floor/ceil/round/abs(x) -> x        (where they are the identity)
//   where(true, a, b) -> a, where(false, a, b) -> b, where(c, a, a) -> a
// User function calls are never folded. Unused nodes are left for
// remove_dead_nodes.
#pragma once

#include "codegen/ir.hpp"

namespace gpukit::ir {

/// `program` (typed: see verify_types) with literals folded and exact
/// simplifications applied.
Program fold_constants(const Program& program);

} // namespace gpukit::ir
