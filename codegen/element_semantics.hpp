// Element semantics: what every IR operation computes on one element, on the
// host. The CPU evaluator applies these functions chunk by chunk and
// fold_constants applies them to literals, so folding can never change an
// answer; codegen/cuda_emitter.cpp emits CUDA that means the same (the
// comment at its top lists the decisions and where the GPU may differ).
//
//   int32_t q = sem::div(INT32_MIN, int32_t{-1});          // INT32_MIN, no trap
//   float r = sem::cast_to<float>(70000.0f, DType::Float16); // inf: rounded to half
//   sem::with_operation(Op::Add, [](auto shape) { ... shape.fn(a, b) ... });
//
// Values are held in their *compute* type (ComputeType<t>): bool, uint8_t,
// int32_t, int64_t, float (for f16, bf16 and f32) or double. Half precision
// values are rounded only by a Cast to their type and when stored.
#pragma once

#include "codegen/dtype.hpp"
#include "codegen/ir.hpp"

#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace gpukit::codegen::sem {

// --- Compute types ------------------------------------------------------------

template <typename T> struct TypeTag { using type = T; };

/// Calls f(TypeTag<C>{}) where C is the C++ type values of `t` compute in.
template <typename F> decltype(auto) with_compute_type(DType t, F&& f) {
  switch (t) {
  case DType::Bool: return f(TypeTag<bool>{});
  case DType::UInt8: return f(TypeTag<uint8_t>{});
  case DType::Int32: return f(TypeTag<int32_t>{});
  case DType::Int64: return f(TypeTag<int64_t>{});
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32: return f(TypeTag<float>{});
  case DType::Float64: return f(TypeTag<double>{});
  }
  llvm_unreachable("unknown DType");
}

template <typename T> inline constexpr bool is_float_v = std::is_floating_point_v<T>;

namespace detail {

/// Integer results wrap modulo 2^bits, as they do on the GPU; bool and uint8
/// compute like C++ does (promoted to int) and convert back.
template <typename T> T wrap(uint64_t v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else
    return static_cast<T>(v); // modular since C++20
}

template <typename T> uint64_t bits64(T v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }

/// Float to integer, as the emitted gk_f32_to_i32 and friends do: truncate
/// toward zero, saturate at the type's range, NaN becomes 0. (A plain C++
/// cast is undefined out of range.)
template <typename I, typename F> I saturate(F v) {
  if (std::isnan(v))
    return 0;
  constexpr F lo = static_cast<F>(std::numeric_limits<I>::min());
  // max + 1 is a power of two, so it is exact in F.
  constexpr F hi = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
  if (v <= lo)
    return std::numeric_limits<I>::min();
  if (v >= hi)
    return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

} // namespace detail

// --- Conversions ----------------------------------------------------------------

inline float round_to_half(float v) { return static_cast<float>(half(v)); }
inline float round_to_bfloat16(float v) { return static_cast<float>(bfloat16(v)); }

/// Converts a compute value to the compute type To (no half rounding).
template <typename To, typename From> To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0); // NaN converts to true, as in C++
  } else if constexpr (is_float_v<To>) {
    return static_cast<To>(v); // round to nearest
  } else if constexpr (is_float_v<From>) {
    if constexpr (std::is_same_v<To, uint8_t>)
      return static_cast<uint8_t>(std::min<uint32_t>(detail::saturate<uint32_t>(v), 255u));
    else
      return detail::saturate<To>(v);
  } else {
    return static_cast<To>(v); // integer to integer: modular
  }
}

/// The Cast operation: `v` converted to DType `to`, whose compute type is To.
/// Casting to float16/bfloat16 rounds to that type (the value stays a float).
/// Casting float64 to half precision goes through float32 (rounding twice),
/// exactly as the emitted CUDA does.
template <typename To, typename From> To cast_to(From v, DType to) {
  To r = convert<To>(v);
  if constexpr (std::is_same_v<To, float>) {
    if (to == DType::Float16)
      return round_to_half(r);
    if (to == DType::BFloat16)
      return round_to_bfloat16(r);
  }
  return r;
}

/// The compute value of a literal: floating types read `f`, others `i`.
template <typename T> T constant_value(const ir::Constant& c) {
  if (is_floating(c.type))
    return convert<T>(c.f);
  return convert<T>(c.i);
}

/// A literal of type `t` holding the compute value `v`.
template <typename T> ir::Constant make_constant(DType t, T v) {
  ir::Constant c;
  c.type = t;
  if constexpr (is_float_v<T>) {
    c.f = static_cast<double>(v);
    c.i = 0; // not meaningful for floating literals (and NaN has no integer)
  } else {
    c.i = static_cast<int64_t>(v);
    c.f = static_cast<double>(v);
  }
  return c;
}

/// `c` converted to `to` with the Cast operation's semantics.
ir::Constant cast_constant(const ir::Constant& c, DType to);

// --- Arithmetic -----------------------------------------------------------------

template <typename T> T add(T a, T b) {
  if constexpr (is_float_v<T>) return a + b;
  else return detail::wrap<T>(detail::bits64(a) + detail::bits64(b));
}
template <typename T> T sub(T a, T b) {
  if constexpr (is_float_v<T>) return a - b;
  else return detail::wrap<T>(detail::bits64(a) - detail::bits64(b));
}
template <typename T> T mul(T a, T b) {
  if constexpr (is_float_v<T>) return a * b;
  else return detail::wrap<T>(detail::bits64(a) * detail::bits64(b));
}
template <typename T> T neg(T a) {
  if constexpr (is_float_v<T>) return -a;
  else return detail::wrap<T>(uint64_t(0) - detail::bits64(a));
}
template <typename T> T abs(T a) {
  if constexpr (is_float_v<T>) return std::fabs(a);
  else if constexpr (std::is_signed_v<T>) return a < 0 ? neg(a) : a; // abs(INT_MIN) == INT_MIN
  else return a;
}
/// Integers: truncating; x / 0 == 0 and INT_MIN / -1 == INT_MIN (wraps).
template <typename T> T div(T a, T b) {
  if constexpr (is_float_v<T>) {
    return a / b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return neg(a);
    return static_cast<T>(a / b);
  }
}
/// C++ remainder (sign of the dividend); x % 0 == 0 and x % -1 == 0. Floats: fmod.
template <typename T> T mod(T a, T b) {
  if constexpr (is_float_v<T>) {
    return std::fmod(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return 0;
    return static_cast<T>(a % b);
  }
}
/// Floats: NaN-ignoring (fmin), and -0 counts as less than +0 as on the GPU.
template <typename T> T min(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  } else {
    return b < a ? b : a;
  }
}
/// Floats: NaN-ignoring (fmax), and +0 counts as greater than -0.
template <typename T> T max(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  } else {
    return a < b ? b : a;
  }
}
template <typename T> T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <typename T> T fma(T a, T b, T c) {
  if constexpr (is_float_v<T>) return std::fma(a, b, c);
  else return add(mul(a, b), c);
}

// Rounding: the identity on integers and bool.
template <typename T> T floor(T a) { if constexpr (is_float_v<T>) return std::floor(a); else return a; }
template <typename T> T ceil(T a) { if constexpr (is_float_v<T>) return std::ceil(a); else return a; }
/// Half away from zero (C's round).
template <typename T> T round(T a) { if constexpr (is_float_v<T>) return std::round(a); else return a; }

// Transcendental functions: floats only (type inference casts integers to
// float32 first). The float overloads of <cmath> compute in float, as CUDA's
// sinf, expf, ... do.
#define GPUKIT_SEM_FLOAT_FN(name, expr)                                                           \
  template <typename T> T name(T a) {                                                             \
    if constexpr (is_float_v<T>)                                                                  \
      return expr;                                                                                \
    else                                                                                          \
      llvm_unreachable(#name " of a non-floating value: types were not inferred");               \
  }
GPUKIT_SEM_FLOAT_FN(sqrt, std::sqrt(a))
GPUKIT_SEM_FLOAT_FN(rsqrt, T(1) / std::sqrt(a))
GPUKIT_SEM_FLOAT_FN(exp, std::exp(a))
GPUKIT_SEM_FLOAT_FN(exp2, std::exp2(a))
GPUKIT_SEM_FLOAT_FN(log, std::log(a))
GPUKIT_SEM_FLOAT_FN(log2, std::log2(a))
GPUKIT_SEM_FLOAT_FN(log10, std::log10(a))
GPUKIT_SEM_FLOAT_FN(sin, std::sin(a))
GPUKIT_SEM_FLOAT_FN(cos, std::cos(a))
GPUKIT_SEM_FLOAT_FN(tan, std::tan(a))
GPUKIT_SEM_FLOAT_FN(tanh, std::tanh(a))
GPUKIT_SEM_FLOAT_FN(erf, std::erf(a))
GPUKIT_SEM_FLOAT_FN(sigmoid, T(1) / (T(1) + std::exp(-a)))
#undef GPUKIT_SEM_FLOAT_FN

template <typename T> T pow(T a, T b) {
  if constexpr (is_float_v<T>)
    return std::pow(a, b);
  else
    llvm_unreachable("pow of non-floating values: types were not inferred");
}

// --- Operations by shape ----------------------------------------------------------

/// T(T): neg, abs, sqrt, ..., and `not` on bool.
template <typename Fn> struct Unary { Fn fn; };
/// T(T, T): add, ..., pow, and `and`/`or` on bool.
template <typename Fn> struct Binary { Fn fn; };
/// bool(T, T): lt, le, gt, ge, eq, ne.
template <typename Fn> struct Compare { Fn fn; };
/// T(T, T, T): fma, clamp.
template <typename Fn> struct Ternary { Fn fn; };
/// T(bool, T, T): where.
struct SelectShape {
  template <typename T> T fn(bool c, T a, T b) const { return c ? a : b; }
};
/// Input, Scalar, Const, Cast and Call: handled by their users directly.
struct NotElementwise {};

template <typename Fn> Unary(Fn) -> Unary<Fn>;
template <typename Fn> Binary(Fn) -> Binary<Fn>;
template <typename Fn> Compare(Fn) -> Compare<Fn>;
template <typename Fn> Ternary(Fn) -> Ternary<Fn>;

/// Calls f(shape) with `op`'s shape and element function: the one table
/// that says what each operation computes, shared by the CPU evaluator and
/// constant folding.
template <typename F> decltype(auto) with_operation(ir::Op op, F&& f) {
  using ir::Op;
  switch (op) {
  case Op::Input:
  case Op::Scalar:
  case Op::Const:
  case Op::Cast:
  case Op::Call: return f(NotElementwise{});
  case Op::Neg: return f(Unary{[](auto a) { return neg(a); }});
  case Op::Not: return f(Unary{[](auto a) { return decltype(a)(!a); }});
  case Op::Abs: return f(Unary{[](auto a) { return abs(a); }});
  case Op::Sqrt: return f(Unary{[](auto a) { return sqrt(a); }});
  case Op::Rsqrt: return f(Unary{[](auto a) { return rsqrt(a); }});
  case Op::Exp: return f(Unary{[](auto a) { return exp(a); }});
  case Op::Exp2: return f(Unary{[](auto a) { return exp2(a); }});
  case Op::Log: return f(Unary{[](auto a) { return log(a); }});
  case Op::Log2: return f(Unary{[](auto a) { return log2(a); }});
  case Op::Log10: return f(Unary{[](auto a) { return log10(a); }});
  case Op::Sin: return f(Unary{[](auto a) { return sin(a); }});
  case Op::Cos: return f(Unary{[](auto a) { return cos(a); }});
  case Op::Tan: return f(Unary{[](auto a) { return tan(a); }});
  case Op::Tanh: return f(Unary{[](auto a) { return tanh(a); }});
  case Op::Sigmoid: return f(Unary{[](auto a) { return sigmoid(a); }});
  case Op::Erf: return f(Unary{[](auto a) { return erf(a); }});
  case Op::Floor: return f(Unary{[](auto a) { return floor(a); }});
  case Op::Ceil: return f(Unary{[](auto a) { return ceil(a); }});
  case Op::Round: return f(Unary{[](auto a) { return round(a); }});
  case Op::Add: return f(Binary{[](auto a, auto b) { return add(a, b); }});
  case Op::Sub: return f(Binary{[](auto a, auto b) { return sub(a, b); }});
  case Op::Mul: return f(Binary{[](auto a, auto b) { return mul(a, b); }});
  case Op::Div: return f(Binary{[](auto a, auto b) { return div(a, b); }});
  case Op::Mod: return f(Binary{[](auto a, auto b) { return mod(a, b); }});
  case Op::Min: return f(Binary{[](auto a, auto b) { return min(a, b); }});
  case Op::Max: return f(Binary{[](auto a, auto b) { return max(a, b); }});
  case Op::Pow: return f(Binary{[](auto a, auto b) { return pow(a, b); }});
  case Op::And: return f(Binary{[](auto a, auto b) { return decltype(a)(a && b); }});
  case Op::Or: return f(Binary{[](auto a, auto b) { return decltype(a)(a || b); }});
  case Op::Lt: return f(Compare{[](auto a, auto b) { return a < b; }});
  case Op::Le: return f(Compare{[](auto a, auto b) { return a <= b; }});
  case Op::Gt: return f(Compare{[](auto a, auto b) { return a > b; }});
  case Op::Ge: return f(Compare{[](auto a, auto b) { return a >= b; }});
  case Op::Eq: return f(Compare{[](auto a, auto b) { return a == b; }});
  case Op::Ne: return f(Compare{[](auto a, auto b) { return a != b; }});
  case Op::Fma: return f(Ternary{[](auto a, auto b, auto c) { return fma(a, b, c); }});
  case Op::Clamp: return f(Ternary{[](auto a, auto b, auto c) { return clamp(a, b, c); }});
  case Op::Select: return f(SelectShape{});
  }
  llvm_unreachable("unknown ir::Op");
}

template <typename S> inline constexpr bool is_unary_v = false;
template <typename Fn> inline constexpr bool is_unary_v<Unary<Fn>> = true;
template <typename S> inline constexpr bool is_binary_v = false;
template <typename Fn> inline constexpr bool is_binary_v<Binary<Fn>> = true;
template <typename S> inline constexpr bool is_compare_v = false;
template <typename Fn> inline constexpr bool is_compare_v<Compare<Fn>> = true;
template <typename S> inline constexpr bool is_ternary_v = false;
template <typename Fn> inline constexpr bool is_ternary_v<Ternary<Fn>> = true;

} // namespace gpukit::codegen::sem
