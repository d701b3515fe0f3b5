// Type inference: gives every node its type and makes every conversion an
// explicit Cast node, so the back ends never convert implicitly.
//
//   ir::Program typed = infer_types(program);
//   verify_types(typed);   // what every later pass and back end relies on
//
// The rules are codegen/dtype.hpp's: operands of an arithmetic operation are
// promoted together; weak operands (weak scalars, literals, and values
// computed from weak operands only) take the other operands' type unless
// their kind is higher (NEP 50); comparisons and logical operations give
// bool (logical operands are converted with != 0); sin, exp, sqrt, pow, ...
// compute in float_type_for(); a Select's condition becomes bool; user
// function arguments are cast to the parameter types; each output is cast to
// its declared type. A weak scalar takes the type it is used at; used at
// several types, it takes the widest (promote) when that holds every value of
// its declared type, else it keeps the declared type, and is cast at each
// other use. Every combination of types is accepted, so nothing here fails
// for a well-formed program.
#pragma once

#include "codegen/ir.hpp"

namespace gpukit::ir {

/// `program` with every node typed and explicit Casts wherever an operand's
/// type differs from the type its operation computes in.
Program infer_types(const Program& program);

/// Checks the invariants infer_types establishes (every node typed; each
/// operand of the type its operation takes; outputs of their declared types;
/// scalar nodes of their parameter's type). Throws Error{Internal} naming the
/// node and both types otherwise.
void verify_types(const Program& program);

} // namespace gpukit::ir
