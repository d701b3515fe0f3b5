// The C++ types GPUkit arrays hold and the C++ scalars expressions accept.
//
//   static_assert(gpukit::Element<gpukit::half>);
//   static_assert(gpukit::scalar_kind_of<long> == gpukit::ScalarKind::Integer);
//   gpukit::cpp_type_t<gpukit::DType::Float16> h;   // gpukit::half
//
// Array<T> elements: float, double, gpukit::half, gpukit::bfloat16, int32_t,
// int64_t, uint8_t and bool (stored as one byte, 0 or 1). Scalars in
// expressions: any C++ arithmetic type, gpukit::half and gpukit::bfloat16.
#pragma once

#include "codegen/dtype.hpp"
#include "support/float16.hpp"

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace gpukit {

/// The element types of Array<T> (docs/TYPES.md).
template <typename T>
concept Element = std::same_as<T, bool> || std::same_as<T, uint8_t> || std::same_as<T, int32_t> ||
                  std::same_as<T, int64_t> || std::same_as<T, half> ||
                  std::same_as<T, bfloat16> || std::same_as<T, float> ||
                  std::same_as<T, double>;

/// The message every "unsupported element type" static_assert shows.
#define GPUKIT_ELEMENT_TYPES_MESSAGE                                                               \
  "T must be one of float, double, gpukit::half, gpukit::bfloat16, int32_t, int64_t, uint8_t or "  \
  "bool"

/// A C++ value usable as a (weak) scalar in an expression.
template <typename S>
concept CppScalar = (std::is_arithmetic_v<S> || std::same_as<S, half> ||
                     std::same_as<S, bfloat16>)&&!std::is_same_v<S, long double>;

/// The kind of a C++ scalar: bool -> Bool, integers -> Integer, the rest -> Floating.
template <CppScalar S>
inline constexpr ScalarKind scalar_kind_of = std::is_same_v<S, bool>   ? ScalarKind::Bool
                                             : std::is_integral_v<S> ? ScalarKind::Integer
                                                                     : ScalarKind::Floating;

/// The C++ element type of a DType: cpp_type_t<DType::Float32> is float.
template <DType D> struct CppType;
template <> struct CppType<DType::Bool> { using type = bool; };
template <> struct CppType<DType::UInt8> { using type = uint8_t; };
template <> struct CppType<DType::Int32> { using type = int32_t; };
template <> struct CppType<DType::Int64> { using type = int64_t; };
template <> struct CppType<DType::Float16> { using type = half; };
template <> struct CppType<DType::BFloat16> { using type = bfloat16; };
template <> struct CppType<DType::Float32> { using type = float; };
template <> struct CppType<DType::Float64> { using type = double; };
template <DType D> using cpp_type_t = typename CppType<D>::type;

} // namespace gpukit
