// The C++ operators of array expressions: + - * / % unary -, comparisons
// < <= > >= == !=, and logical && || !. Each builds a node; nothing runs
// until the expression is assigned to an array.
//
//   auto e = (x + 1) * y > 0.5f && !(x == y);
//   out = e;                                   // bool result
//
// They apply when at least one operand is an Array or an expression, so C++
// arithmetic on plain numbers is untouched. && and || do not short-circuit:
// both sides are evaluated for every element. Results follow
// docs/TYPES.md (comparisons and logic give bool).
#pragma once

#include "dsl/expr.hpp"

namespace gpukit {

#define GPUKIT_BINARY_OPERATOR(symbol, op)                                                         \
  template <typename A, typename B>                                                                \
    requires(ArrayExpr<A> || ArrayExpr<B>)                                                         \
  auto operator symbol(const A& a, const B& b) {                                                   \
    return detail::make_binary<ir::Op::op>(a, b);                                                  \
  }

GPUKIT_BINARY_OPERATOR(+, Add)
GPUKIT_BINARY_OPERATOR(-, Sub)
GPUKIT_BINARY_OPERATOR(*, Mul)
GPUKIT_BINARY_OPERATOR(/, Div)
GPUKIT_BINARY_OPERATOR(%, Mod)
GPUKIT_BINARY_OPERATOR(<, Lt)
GPUKIT_BINARY_OPERATOR(<=, Le)
GPUKIT_BINARY_OPERATOR(>, Gt)
GPUKIT_BINARY_OPERATOR(>=, Ge)
GPUKIT_BINARY_OPERATOR(==, Eq)
GPUKIT_BINARY_OPERATOR(!=, Ne)
GPUKIT_BINARY_OPERATOR(&&, And)
GPUKIT_BINARY_OPERATOR(||, Or)

#undef GPUKIT_BINARY_OPERATOR

template <ArrayExpr A> auto operator-(const A& a) { return detail::make_unary<ir::Op::Neg>(a); }
template <ArrayExpr A> auto operator!(const A& a) { return detail::make_unary<ir::Op::Not>(a); }

} // namespace gpukit
