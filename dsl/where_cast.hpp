// where(cond, a, b) and cast<T>(e): choosing and converting element-wise.
//
//   out = where(x > 0.0f, x, 0.01f * x);          // leaky ReLU
//   counts = cast<int32_t>(floor(x * 10.0f));
//
// where gives the promotion of a and b, its condition converted to bool
// (non-zero is true); both branches are computed for every element. cast<T>
// converts as docs/TYPES.md says (floating to integer truncates; anything to
// bool is != 0); T must be an Array element type. cast of a plain scalar
// gives a scalar of exactly that type (no longer weak).
#pragma once

#include "dsl/expr.hpp"

namespace gpukit {

/// cond ? a : b, element-wise.
template <typename Cond, typename A, typename B>
  requires(ArrayExpr<Cond> || ArrayExpr<A> || ArrayExpr<B>)
auto where(const Cond& cond, const A& a, const B& b) {
  return detail::make_ternary<ir::Op::Select>(cond, a, b);
}

/// `e` converted to T.
template <typename T, typename E> auto cast(const E& e) {
  static_assert(Element<T>, "gpukit::cast<T>: " GPUKIT_ELEMENT_TYPES_MESSAGE);
  static_assert(Operand<E>, GPUKIT_OPERAND_MESSAGE);
  if constexpr (Element<T> && Operand<E>)
    return CastExpr<dtype_of<T>, detail::expr_t<E>>(detail::to_expr(e));
}

} // namespace gpukit
