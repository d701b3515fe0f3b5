// Every DSL operation on every element type, checked against a float64 (or
// exact integer) host reference. ops_test.cpp runs the cases on whatever
// backend is in use with fixed seeds; gpu_ops_test.cpp runs them on the GPU
// with fresh seeds.
//
//   for (const OpCase& c : op_cases()) EXPECT_EQ(c.run({seed, sizes}), "");
//
// Each case assigns one operation (T op T, T op scalar, casts, ...) into a
// poisoned output (NaN for floating types, bytes 0xAB otherwise, so an
// element the kernel did not write fails) and compares every element:
//
//   result type   tolerance |actual - expected| <= rtol * |expected| + atol
//   integers      exact (wrap-around, /0 == 0 as docs/TYPES.md says)
//   bool          exact, and every byte must be 0 or 1
//   f64           basic ops 2^-52, transcendental 8 ulp (CUDA vs glibc)
//   f32           basic ops 1e-6, transcendental 8 ulp (~9.5e-7)
//   f16           2 ulp of f16 (2^-9 relative), atol 2^-24
//   bf16          2 ulp of bf16 (2^-6 relative)
//
// The expected value is the float64 result rounded to the result type
// first (so inf and overflow compare exactly); NaN passes only where the
// reference is NaN. Sizes 1, 3, 1023 and 4097 defeat vectorisation.
#pragma once

#include "dsl/gpukit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace gpukit::testing {

struct RunOptions {
  uint64_t seed = 1;
  std::vector<int64_t> sizes = {1, 3, 1023, 4097};
  /// Instead of running: compile the case's kernel with NVRTC (no GPU needed).
  bool compile_only = false;
};

/// Compiles the kernel `out = e` would run; "" or NVRTC's complaint.
template <typename R, typename E> std::string compile_kernel(Array<R>& out, const E& e) {
  try {
    KernelInfo k = inspect(out, e);
    rt::Runtime::get().kernels().get({k.name, k.source});
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

struct OpCase {
  std::string name; ///< "f32.sin", "i32.div", "u8.cast<f16>"
  DType dtype;      ///< the operands' type
  /// Runs the case; returns "" on success, else the first mismatches.
  std::function<std::string(const RunOptions&)> run;
};

/// Every case, made once (defined in ops_test.cpp).
const std::vector<OpCase>& op_cases();

// --- Inputs -------------------------------------------------------------------

/// Ranges inputs are drawn from: [flo, fhi) for floating types, [ilo, ihi)
/// for integers (uint8 clamps to 0..255), bool 50/50.
struct Domain {
  double flo, fhi;
  int64_t ilo, ihi;
};
inline constexpr Domain kGeneral{-4.0, 4.0, -50, 50};
inline constexpr Domain kPositive{0.125, 8.0, 1, 50};
inline constexpr Domain kExp{-8.0, 8.0, -8, 8};
inline constexpr Domain kTan{-1.4, 1.4, -1, 2};
inline constexpr Domain kPowBase{0.5, 4.0, 1, 6};
inline constexpr Domain kPowExponent{-3.0, 3.0, 0, 6};

template <typename T> Array<T> make_input(int64_t n, uint64_t seed, const Domain& d) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                std::is_same_v<T, bfloat16>)
    return Array<T>::random({n}, seed, d.flo, d.fhi);
  else if constexpr (std::is_same_v<T, uint8_t>)
    return Array<T>::random({n}, seed, static_cast<double>(std::max<int64_t>(d.ilo, 0)),
                            static_cast<double>(std::min<int64_t>(std::max<int64_t>(d.ihi, 1), 256)));
  else
    return Array<T>::random({n}, seed, static_cast<double>(d.ilo), static_cast<double>(d.ihi));
}

// --- Values ---------------------------------------------------------------------

template <typename T> double to_double(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

template <typename T> int64_t to_int(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return static_cast<int64_t>(static_cast<float>(v));
  else
    return static_cast<int64_t>(v);
}

/// An int64 result wrapped to R, as integer arithmetic wraps on the GPU.
template <typename R> R wrap_to(int64_t v) {
  if constexpr (std::is_same_v<R, bool>)
    return v != 0;
  else
    return static_cast<R>(static_cast<uint64_t>(v));
}

/// A float64 value rounded to the floating type R (f16/bf16 through f32, as
/// the kernels do), returned as a double.
template <typename R> double round_to(double v) {
  if constexpr (std::is_same_v<R, double>)
    return v;
  else if constexpr (std::is_same_v<R, float>)
    return static_cast<double>(static_cast<float>(v));
  else
    return to_double(R(static_cast<float>(v)));
}

/// Float to integer as docs/TYPES.md and the emitter define it: truncate,
/// saturate at the type's range, NaN to 0; to bool: != 0.
template <typename R> R saturate_to(double v) {
  if constexpr (std::is_same_v<R, bool>) {
    return v != 0.0;
  } else {
    if (std::isnan(v))
      return 0;
    double t = std::trunc(v);
    if (t <= static_cast<double>(std::numeric_limits<R>::min()))
      return std::numeric_limits<R>::min();
    if (t >= static_cast<double>(std::numeric_limits<R>::max()))
      return std::numeric_limits<R>::max();
    return static_cast<R>(t);
  }
}

struct Tolerance {
  double rtol, atol;
};

/// The table at the top of this file.
template <typename R> Tolerance tolerance(bool transcendental) {
  if constexpr (std::is_same_v<R, double>)
    return {transcendental ? 8 * 0x1p-52 : 0x1p-52, 0.0};
  else if constexpr (std::is_same_v<R, float>)
    return {transcendental ? 8 * 0x1p-23 : 1e-6, 1e-30};
  else if constexpr (std::is_same_v<R, half>)
    return {0x1p-9, 0x1p-24};
  else
    return {0x1p-6, 1e-30};
}

inline bool close_enough(double actual, double expected, Tolerance t) {
  if (std::isnan(expected))
    return std::isnan(actual);
  if (std::isnan(actual))
    return false;
  if (std::isinf(expected) || std::isinf(actual))
    return actual == expected;
  return std::fabs(actual - expected) <= t.rtol * std::fabs(expected) + t.atol;
}

// --- Outputs --------------------------------------------------------------------

/// An output of n elements filled with a pattern no kernel computes by
/// accident: NaN, or bytes 0xAB.
template <typename R> Array<R> poisoned(int64_t n) {
  if constexpr (std::is_floating_point_v<R>)
    return Array<R>::full({n}, std::numeric_limits<R>::quiet_NaN());
  else if constexpr (std::is_same_v<R, half> || std::is_same_v<R, bfloat16>)
    return Array<R>::full({n}, R(std::numeric_limits<float>::quiet_NaN()));
  else {
    std::vector<uint8_t> bytes(static_cast<size_t>(n) * sizeof(R), 0xAB);
    return Array<R>::from_host(std::span<const R>(reinterpret_cast<const R*>(bytes.data()),
                                                  static_cast<size_t>(n)),
                               {n});
  }
}

/// The output's elements as raw bytes, so a bool byte other than 0 or 1
/// (an unwritten 0xAB) can be seen.
template <typename R> std::vector<uint8_t> raw_bytes(const Array<R>& a) {
  std::vector<uint8_t> bytes(static_cast<size_t>(a.size()) * sizeof(R));
  a.to_host(std::span<R>(reinterpret_cast<R*>(bytes.data()), static_cast<size_t>(a.size())));
  return bytes;
}

template <typename R> R element(const std::vector<uint8_t>& bytes, size_t i) {
  R v;
  std::memcpy(&v, bytes.data() + i * sizeof(R), sizeof(R));
  return v;
}

template <typename R> std::string format_value(R v) {
  if constexpr (std::is_same_v<R, bool> || std::is_same_v<R, uint8_t>)
    return fmt::format("{}", static_cast<int>(v));
  else if constexpr (std::is_same_v<R, half> || std::is_same_v<R, bfloat16>)
    return fmt::format("{}", static_cast<float>(v));
  else
    return fmt::format("{}", v);
}

/// Compares n results with expectations; `expected(i)` gives R for integer
/// and bool types, a double for floating ones; `inputs(i)` describes the
/// operands for messages. Returns "" or the first few mismatches.
template <typename R, typename Expected, typename Inputs>
std::string compare(const Array<R>& out, Expected&& expected, Inputs&& inputs, bool transcendental) {
  std::vector<uint8_t> bytes = raw_bytes(out);
  std::string errors;
  int shown = 0;
  size_t bad = 0;
  for (size_t i = 0; i < static_cast<size_t>(out.size()); ++i) {
    bool ok;
    std::string got, want;
    if constexpr (std::is_same_v<R, bool>) {
      uint8_t b = bytes[i];
      bool e = expected(i);
      ok = (b == 0 || b == 1) && static_cast<bool>(b) == e;
      got = fmt::format("byte {:#x}", b);
      // Not `want = e ? "1" : "0"`: GCC 12 warns falsely (-Wrestrict,
      // https://gcc.gnu.org/bugzilla/show_bug.cgi?id=105329).
      want = fmt::format("{:d}", static_cast<int>(e));
    } else if constexpr (std::is_integral_v<R>) {
      R a = element<R>(bytes, i);
      R e = expected(i);
      ok = a == e;
      got = format_value(a);
      want = format_value(e);
    } else {
      R a = element<R>(bytes, i);
      double e = expected(i);
      ok = close_enough(to_double(a), e, tolerance<R>(transcendental));
      got = format_value(a);
      want = fmt::format("{}", e);
    }
    if (ok)
      continue;
    ++bad;
    if (shown++ < 4)
      errors += fmt::format("\n  [{}] {}: got {}, expected {}", i, inputs(i), got, want);
  }
  if (bad)
    errors = fmt::format("{} of {} elements wrong:{}", bad, out.size(), errors);
  return errors;
}

} // namespace gpukit::testing
