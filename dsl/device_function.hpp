// User device functions: a snippet of CUDA written once, callable in
// expressions, compiled into the generated kernel on the GPU and as ordinary
// C++ for the CPU fallback, from the same text.
//
//   GPUKIT_DEVICE_FUNCTION(float, softplus, (float, x), { return x > 20.0f ? x : log1pf(expf(x)); });
//   GPUKIT_DEVICE_FUNCTION(float, lerp, (float, a, float, b, float, t), { return a + t * (b - a); });
//   out = softplus(x) * 2.0f + lerp(x, y, 0.25f);
//
// The macro takes the result type, the name, the parameters as a
// parenthesised list of `type, name` pairs (1 to 4 parameters) and the body
// in braces (commas inside it are fine). It defines, in the current
// namespace, a function template `name` that builds a call node when an
// argument is an Array or an expression (and simply calls the host version
// when all are plain numbers). The body is stringified into the kernel once
// per program (ir::UserFunction) and compiled here as the host
// implementation, so both back ends run the same code.
//
// Rules: use it at namespace scope; parameter and result types are float,
// double, int32_t, int64_t, uint8_t or bool (half-precision values arrive as
// float); arguments convert to the parameter types. The body may call CUDA
// math functions available on the host too (expf, log1pf, fmaxf, ...); a few
// device-only ones (rsqrtf, __expf, __fdividef, __saturatef, ...) have host
// versions in gpukit::device_math, which the host body sees. Two functions
// with one name but different bodies in one kernel are an error.
#pragma once

#include "codegen/ir.hpp"
#include "dsl/expr.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace gpukit {

/// Host versions of CUDA device-only math functions, visible to the host
/// implementation of every GPUKIT_DEVICE_FUNCTION body.
namespace device_math {
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline double exp10(double x) { return std::pow(10.0, x); }
inline float normcdff(float x) { return 0.5f * std::erfc(-x * 0.70710678118654752f); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __saturatef(float x) { return std::isnan(x) ? 0.0f : std::clamp(x, 0.0f, 1.0f); }
template <typename T> T min(T a, T b) { return b < a ? b : a; }
template <typename T> T max(T a, T b) { return a < b ? b : a; }
} // namespace device_math

namespace detail {

template <typename T>
concept DeviceFunctionType =
    std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, int32_t> ||
    std::same_as<T, int64_t> || std::same_as<T, uint8_t> || std::same_as<T, bool>;

#define GPUKIT_DEVICE_FUNCTION_TYPES_MESSAGE                                                       \
  "GPUKIT_DEVICE_FUNCTION: parameter and result types must be float, double, int32_t, int64_t, "  \
  "uint8_t or bool"

/// The text between a body's outer braces, trimmed.
std::string device_function_body(std::string_view braced);

/// The ir::UserFunction of a GPUKIT_DEVICE_FUNCTION, made once per process.
template <typename Fn> const ir::UserFunction& user_function() {
  static const ir::UserFunction function = [] {
    using Params = typename Fn::param_types;
    ir::UserFunction f;
    f.name = Fn::name;
    f.result = dtype_of<typename Fn::result>;
    f.body = device_function_body(Fn::body);
    [&]<size_t... I>(std::index_sequence<I...>) {
      (f.params.push_back({Fn::param_names[I], dtype_of<std::tuple_element_t<I, Params>>}), ...);
      f.host = [](const void* const* args, void* result) {
        *static_cast<typename Fn::result*>(result) =
            Fn::host(*static_cast<const std::tuple_element_t<I, Params>*>(args[I])...);
      };
    }(std::make_index_sequence<std::tuple_size_v<Params>>{});
    return f;
  }();
  return function;
}

} // namespace detail

/// `fn(args...)` for a GPUKIT_DEVICE_FUNCTION `Fn`.
template <typename Fn, typename... A> struct CallExpr : detail::ExprTag {
  static constexpr DType dtype = dtype_of<typename Fn::result>;
  static constexpr bool weak = false;
  static constexpr unsigned num_arrays = (A::num_arrays + ... + 0);
  static constexpr unsigned num_scalars = (A::num_scalars + ... + 0);

  std::tuple<A...> args;

  explicit CallExpr(const A&... a) : args(a...) {}
  void collect(detail::LeafSink& s) const {
    std::apply([&](const A&... a) { (a.collect(s), ...); }, args);
  }
  static ir::NodeId build(detail::IrBuilder& b) {
    // Braced lists evaluate left to right: the order collect() uses. The IR
    // converts each argument to its parameter's type.
    ir::NodeId ids[] = {A::build(b)...};
    return b.call(detail::user_function<Fn>(), ids);
  }
  static void print(detail::ExprPrinter& p) {
    p.begin_call(Fn::name);
    unsigned k = 0;
    ((k++ ? p.next_argument() : void(), A::print(p)), ...);
    p.end_call();
  }
};

namespace detail {

template <typename Fn, typename... Args> auto call_device_function(const Args&... args) {
  static_assert((Operand<Args> && ...), GPUKIT_OPERAND_MESSAGE);
  if constexpr ((ArrayExpr<Args> || ...))
    return CallExpr<Fn, expr_t<Args>...>(to_expr(args)...);
  else
    return Fn::host(args...); // plain numbers: just call it
}

} // namespace detail
} // namespace gpukit

// --- The macro ---------------------------------------------------------------

#define GPUKIT_DF_CAT_(a, b) a##b
#define GPUKIT_DF_CAT(a, b) GPUKIT_DF_CAT_(a, b)
#define GPUKIT_DF_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, N, ...) N
#define GPUKIT_DF_COUNT(...) GPUKIT_DF_COUNT_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
// Applies GPUKIT_DF_<what>_<n> to a parenthesised parameter list of n items.
#define GPUKIT_DF_APPLY(what, params) GPUKIT_DF_CAT(what, GPUKIT_DF_COUNT params) params

#define GPUKIT_DF_DECL_2(t1, n1) t1 n1
#define GPUKIT_DF_DECL_4(t1, n1, t2, n2) t1 n1, t2 n2
#define GPUKIT_DF_DECL_6(t1, n1, t2, n2, t3, n3) t1 n1, t2 n2, t3 n3
#define GPUKIT_DF_DECL_8(t1, n1, t2, n2, t3, n3, t4, n4) t1 n1, t2 n2, t3 n3, t4 n4
#define GPUKIT_DF_TYPES_2(t1, n1) t1
#define GPUKIT_DF_TYPES_4(t1, n1, t2, n2) t1, t2
#define GPUKIT_DF_TYPES_6(t1, n1, t2, n2, t3, n3) t1, t2, t3
#define GPUKIT_DF_TYPES_8(t1, n1, t2, n2, t3, n3, t4, n4) t1, t2, t3, t4
#define GPUKIT_DF_NAMES_2(t1, n1) #n1
#define GPUKIT_DF_NAMES_4(t1, n1, t2, n2) #n1, #n2
#define GPUKIT_DF_NAMES_6(t1, n1, t2, n2, t3, n3) #n1, #n2, #n3
#define GPUKIT_DF_NAMES_8(t1, n1, t2, n2, t3, n3, t4, n4) #n1, #n2, #n3, #n4

/// Defines device function `fn_name`; see the top of this file.
#define GPUKIT_DEVICE_FUNCTION(result_type, fn_name, params, ...)                                 \
  struct gpukit_device_function_##fn_name {                                                        \
    using result = result_type;                                                                    \
    using param_types = std::tuple<GPUKIT_DF_APPLY(GPUKIT_DF_TYPES_, params)>;                     \
    static constexpr const char* name = #fn_name;                                                  \
    static constexpr const char* param_names[] = {GPUKIT_DF_APPLY(GPUKIT_DF_NAMES_, params)};      \
    static constexpr const char* body = #__VA_ARGS__;                                              \
    static result_type host(GPUKIT_DF_APPLY(GPUKIT_DF_DECL_, params)) {                            \
      using namespace ::gpukit::device_math;                                                       \
      __VA_ARGS__                                                                                  \
    }                                                                                              \
    static_assert(::gpukit::detail::DeviceFunctionType<result_type>,                               \
                  GPUKIT_DEVICE_FUNCTION_TYPES_MESSAGE);                                           \
    static_assert([]<typename... P>(std::tuple<P...>*) {                                           \
      return (::gpukit::detail::DeviceFunctionType<P> && ...);                                     \
    }(static_cast<param_types*>(nullptr)), GPUKIT_DEVICE_FUNCTION_TYPES_MESSAGE);                  \
  };                                                                                               \
  template <typename... Args>                                                                      \
    requires(sizeof...(Args) == std::tuple_size_v<gpukit_device_function_##fn_name::param_types>)  \
  auto fn_name(const Args&... args) {                                                              \
    return ::gpukit::detail::call_device_function<gpukit_device_function_##fn_name>(args...);      \
  }                                                                                                \
  static_assert(true, "")
