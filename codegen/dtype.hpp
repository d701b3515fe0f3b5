// DType: the element types GPUkit computes with, and the promotion rules
// that decide the type of `a op b`. Everything is constexpr so the C++ DSL
// knows an expression's type at compile time and the IR agrees at run time.
//
//   static_assert(promote(DType::Float16, DType::Int32) == DType::Float16);
//   static_assert(promote_with_scalar(DType::Int32, ScalarKind::Floating) == DType::Float32);
//
// The rules (docs/TYPES.md has the table):
//  * kinds are ordered bool < integer < floating;
//  * array op array of the same kind: the wider type (uint8 + int32 -> int32,
//    float16 + bfloat16 -> float32); of different kinds: the type of the
//    higher-kind operand (int64 + float16 -> float16), as PyTorch and JAX do,
//    where NumPy would widen to float64;
//  * a C++ scalar is "weak" (NumPy's NEP 50): it takes the array's type when
//    its kind is not higher; otherwise the default type of its kind (int32,
//    float32);
//  * float16 and bfloat16 are storage types: inside a kernel they compute in
//    float32 and round when stored, as torch.compile does.
#pragma once

#include "support/float16.hpp"

#include <cstdint>
#include <string_view>

namespace gpukit {

enum class DType : uint8_t {
  Bool,
  UInt8,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};

inline constexpr DType AllDTypes[] = {DType::Bool,    DType::UInt8,    DType::Int32,   DType::Int64,
                                      DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

enum class ScalarKind : uint8_t { Bool, Integer, Floating };

constexpr ScalarKind kind_of(DType t) {
  switch (t) {
  case DType::Bool: return ScalarKind::Bool;
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: return ScalarKind::Integer;
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32:
  case DType::Float64: return ScalarKind::Floating;
  }
  return ScalarKind::Bool;
}

constexpr bool is_floating(DType t) { return kind_of(t) == ScalarKind::Floating; }
constexpr bool is_integer(DType t) { return kind_of(t) == ScalarKind::Integer; }
/// float16 and bfloat16: stored in 16 bits, computed in float32.
constexpr bool is_half_precision(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

constexpr unsigned size_of(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::UInt8: return 1;
  case DType::Float16:
  case DType::BFloat16: return 2;
  case DType::Int32:
  case DType::Float32: return 4;
  case DType::Int64:
  case DType::Float64: return 8;
  }
  return 0;
}

/// Short name used in the text language and in messages: "f32", "i64", "bool".
constexpr std::string_view short_name(DType t) {
  switch (t) {
  case DType::Bool: return "bool";
  case DType::UInt8: return "u8";
  case DType::Int32: return "i32";
  case DType::Int64: return "i64";
  case DType::Float16: return "f16";
  case DType::BFloat16: return "bf16";
  case DType::Float32: return "f32";
  case DType::Float64: return "f64";
  }
  return "?";
}

/// The type a value of `t` has inside a kernel (half precision computes in float32).
constexpr DType compute_type(DType t) { return is_half_precision(t) ? DType::Float32 : t; }

/// Rank within a kind, used to pick the wider of two types of the same kind.
constexpr int width_rank(DType t) {
  switch (t) {
  case DType::Bool: return 0;
  case DType::UInt8: return 1;
  case DType::Int32: return 2;
  case DType::Int64: return 3;
  case DType::Float16: return 1;
  case DType::BFloat16: return 1;
  case DType::Float32: return 2;
  case DType::Float64: return 3;
  }
  return 0;
}

/// The result type of a binary arithmetic operation on two arrays.
constexpr DType promote(DType a, DType b) {
  if (a == b)
    return a;
  ScalarKind ka = kind_of(a), kb = kind_of(b);
  if (ka != kb)
    return ka > kb ? a : b;
  if (is_half_precision(a) && is_half_precision(b)) // f16 with bf16: neither holds the other
    return DType::Float32;
  return width_rank(a) >= width_rank(b) ? a : b;
}

/// The default type of a C++ scalar's kind when it must widen an array's kind.
constexpr DType default_type(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool: return DType::Bool;
  case ScalarKind::Integer: return DType::Int32;
  case ScalarKind::Floating: return DType::Float32;
  }
  return DType::Float32;
}

/// The result type of `array op scalar` where the scalar is weak (NEP 50).
constexpr DType promote_with_scalar(DType array, ScalarKind scalar) {
  return scalar > kind_of(array) ? default_type(scalar) : array;
}

/// The type transcendental functions (sin, exp, sqrt, ...) compute in:
/// floating types keep theirs, bool and integers become float32.
constexpr DType float_type_for(DType t) { return is_floating(t) ? t : DType::Float32; }

/// Maps C++ element types to DType: dtype_of<float> == DType::Float32.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<half> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <typename T> inline constexpr DType dtype_of = DTypeOf<T>::value;

} // namespace gpukit
