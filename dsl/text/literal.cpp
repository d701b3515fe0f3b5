#include "dsl/text/literal.hpp"

#include "dsl/text/lower.hpp"
#include "dsl/text/parser.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <cstdint>

namespace gpukit::text {

ir::Constant natural_constant(const Expr& e) {
  if (e.kind == ExprKind::Bool)
    return ir::Constant::of_int(DType::Bool, e.int_value);
  if (e.is_float)
    return float_constant(DType::Float64, e.float_value);
  bool fits32 = e.int_value >= INT32_MIN && e.int_value <= INT32_MAX;
  return ir::Constant::of_int(fits32 ? DType::Int32 : DType::Int64, e.int_value);
}

ScalarKind literal_kind(const Expr& e) {
  if (e.kind == ExprKind::Bool)
    return ScalarKind::Bool;
  return e.is_float ? ScalarKind::Floating : ScalarKind::Integer;
}

std::optional<std::string> convert_literal(const Expr& e, DType type, ir::Constant& out) {
  ScalarKind have = literal_kind(e);
  switch (kind_of(type)) {
  case ScalarKind::Bool:
    if (have == ScalarKind::Floating || (have == ScalarKind::Integer && e.int_value != 0 && e.int_value != 1))
      return fmt::format("bool takes true, false, 0 or 1, not {}", format_expr(e));
    out = ir::Constant::of_int(DType::Bool, e.int_value);
    return std::nullopt;
  case ScalarKind::Integer: {
    if (have == ScalarKind::Floating)
      return fmt::format("{} is an integer type but {} is a float", short_name(type), format_expr(e));
    int64_t lo = type == DType::UInt8 ? 0 : type == DType::Int32 ? INT32_MIN : INT64_MIN;
    int64_t hi = type == DType::UInt8 ? 255 : type == DType::Int32 ? INT32_MAX : INT64_MAX;
    if (e.int_value < lo || e.int_value > hi)
      return fmt::format("{} does not fit in {} ({} to {})", e.int_value, short_name(type), lo, hi);
    out = ir::Constant::of_int(type, e.int_value);
    return std::nullopt;
  }
  case ScalarKind::Floating:
    out = float_constant(type, have == ScalarKind::Floating ? e.float_value
                                                                    : static_cast<double>(e.int_value));
    return std::nullopt;
  }
  llvm_unreachable("unknown ScalarKind");
}

ir::Constant float_constant(DType type, double value) {
  bool representable = value >= -9223372036854775808.0 && value < 9223372036854775808.0;
  return ir::Constant{type, representable ? static_cast<int64_t>(value) : 0, value};
}

ir::Constant parse_scalar_value(std::string_view text, DType type, std::string_view name) {
  std::string origin = fmt::format("--scalar {}", name);
  Expr e = parse_expression(text, origin);
  if (e.kind != ExprKind::Number && e.kind != ExprKind::Bool)
    throw Error(ErrorKind::Usage,
                fmt::format("--scalar {}={}: the value must be a number or true/false", name, text));
  ir::Constant c;
  if (auto why = convert_literal(e, type, c))
    throw Error(ErrorKind::Type,
                fmt::format("--scalar {}={}: '{}' is {} and {}", name, text, name, short_name(type), *why));
  return c;
}


} // namespace gpukit::text
