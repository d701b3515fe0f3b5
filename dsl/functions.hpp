// The math functions of array expressions: abs sqrt rsqrt exp exp2 log
// log2 log10 sin cos tan tanh sigmoid erf floor ceil round, min max pow,
// fma and clamp. Like the operators they build nodes and apply only when an
// argument is an Array or an expression, so `std::sin(1.0)` and `sin(1.0)`
// on plain doubles keep their usual meaning.
//
//   out = clamp(fma(a, x, y), 0.0f, 1.0f) + sigmoid(-x);
//   out = pow(x, 2) + min(x, y);
//
// Types (docs/TYPES.md): transcendental functions compute in a floating
// type (f32 for bool and integer operands); abs, floor, ceil, round, min,
// max, fma and clamp keep the promoted type. min and max ignore a NaN
// operand like fminf/fmaxf; round halves away from zero like C's round().
#pragma once

#include "dsl/expr.hpp"

namespace gpukit {

#define GPUKIT_UNARY_FUNCTION(name, op)                                                            \
  template <ArrayExpr A> auto name(const A& a) { return detail::make_unary<ir::Op::op>(a); }

GPUKIT_UNARY_FUNCTION(abs, Abs)
GPUKIT_UNARY_FUNCTION(sqrt, Sqrt)
GPUKIT_UNARY_FUNCTION(rsqrt, Rsqrt)
GPUKIT_UNARY_FUNCTION(exp, Exp)
GPUKIT_UNARY_FUNCTION(exp2, Exp2)
GPUKIT_UNARY_FUNCTION(log, Log)
GPUKIT_UNARY_FUNCTION(log2, Log2)
GPUKIT_UNARY_FUNCTION(log10, Log10)
GPUKIT_UNARY_FUNCTION(sin, Sin)
GPUKIT_UNARY_FUNCTION(cos, Cos)
GPUKIT_UNARY_FUNCTION(tan, Tan)
GPUKIT_UNARY_FUNCTION(tanh, Tanh)
GPUKIT_UNARY_FUNCTION(sigmoid, Sigmoid)
GPUKIT_UNARY_FUNCTION(erf, Erf)
GPUKIT_UNARY_FUNCTION(floor, Floor)
GPUKIT_UNARY_FUNCTION(ceil, Ceil)
GPUKIT_UNARY_FUNCTION(round, Round)

#undef GPUKIT_UNARY_FUNCTION

#define GPUKIT_BINARY_FUNCTION(name, op)                                                           \
  template <typename A, typename B>                                                                \
    requires(ArrayExpr<A> || ArrayExpr<B>)                                                         \
  auto name(const A& a, const B& b) {                                                              \
    return detail::make_binary<ir::Op::op>(a, b);                                                  \
  }

GPUKIT_BINARY_FUNCTION(min, Min)
GPUKIT_BINARY_FUNCTION(max, Max)
GPUKIT_BINARY_FUNCTION(pow, Pow)

#undef GPUKIT_BINARY_FUNCTION

/// a * b + c, rounded once.
template <typename A, typename B, typename C>
  requires(ArrayExpr<A> || ArrayExpr<B> || ArrayExpr<C>)
auto fma(const A& a, const B& b, const C& c) {
  return detail::make_ternary<ir::Op::Fma>(a, b, c);
}

/// min(max(x, lo), hi).
template <typename X, typename Lo, typename Hi>
  requires(ArrayExpr<X> || ArrayExpr<Lo> || ArrayExpr<Hi>)
auto clamp(const X& x, const Lo& lo, const Hi& hi) {
  return detail::make_ternary<ir::Op::Clamp>(x, lo, hi);
}

} // namespace gpukit
