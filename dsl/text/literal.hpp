// Literals of the text language as IR constants: the type C++ would give
// the same literal, and conversion to a declared type with a reason when it
// does not fit.
//
//   ir::Constant c = natural_constant(parse_expression("2.5", "t"));  // f64 2.5
//   if (auto why = convert_literal(e, DType::Int32, c)) ...           // "i32 is an integer type but 2.5 is a float"
#pragma once

#include "codegen/ir.hpp"
#include "dsl/text/ast.hpp"

#include <optional>
#include <string>

namespace gpukit::text {

/// The constant a literal (Number or Bool) denotes, typed as C++ types the
/// same literal: int32 (int64 when larger), double, bool.
ir::Constant natural_constant(const Expr& e);

ScalarKind literal_kind(const Expr& e);

/// Converts literal `e` to `type` into `out`; returns why it cannot be one.
std::optional<std::string> convert_literal(const Expr& e, DType type, ir::Constant& out);

/// A floating constant whose integer view is 0 when the value has no int64
/// equivalent (inf, nan, beyond +-2^63): ir::Constant::of_float casts
/// unconditionally, which is undefined behaviour for those values.
ir::Constant float_constant(DType type, double value);

} // namespace gpukit::text
