// Every operation on every element type against a float64 / exact integer
// reference (op_reference.hpp says how and with which tolerances), on the
// backend in use: the CPU fallback here, the GPU where there is one. Fixed
// seeds; gpu_ops_test.cpp reruns the same cases with fresh ones.
#include "op_reference.hpp"

#include <gtest/gtest.h>

namespace gpukit::testing {
namespace {

enum class Kind {
  Arith,          ///< keeps the promoted type: float64 reference, or exact integers
  Transcendental, ///< computes in a floating type
  Predicate,      ///< gives bool
};

template <typename R, typename F, typename G> auto reference(Kind kind, F&& f, G&& g) {
  if constexpr (std::is_same_v<R, bool>)
    return kind == Kind::Predicate ? f() != 0.0 : wrap_to<bool>(g());
  else if constexpr (std::is_integral_v<R>)
    return wrap_to<R>(g());
  else
    return round_to<R>(f());
}

std::string case_name(DType t, std::string_view op) { return fmt::format("{}.{}", short_name(t), op); }

template <typename T> auto host(const Array<T>& a) {
  std::vector<T> v = a.to_host();
  return [v](size_t i) -> T { return v[i]; };
}

template <typename T, typename Make, typename F, typename G>
OpCase unary_case(std::string_view op, Kind kind, Domain dom, Make make, F f, G g) {
  return {case_name(dtype_of<T>, op), dtype_of<T>, [=](const RunOptions& o) -> std::string {
            for (int64_t n : o.sizes) {
              Array<T> a = make_input<T>(n, o.seed, dom);
              using R = cpp_type_t<decltype(make(a))::dtype>;
              Array<R> out = poisoned<R>(n);
              if (o.compile_only)
                return compile_kernel(out, make(a));
              out = make(a);
              auto ha = host(a);
              std::string err = compare(
                  out,
                  [&](size_t i) {
                    return reference<R>(kind, [&] { return f(to_double(ha(i))); },
                                        [&] { return g(to_int(ha(i))); });
                  },
                  [&](size_t i) { return fmt::format("a = {}", format_value(ha(i))); },
                  kind == Kind::Transcendental);
              if (!err.empty())
                return fmt::format("n = {}, seed {}: {}", n, o.seed, err);
            }
            return "";
          }};
}

template <typename T, typename Make, typename F, typename G>
OpCase binary_case(std::string_view op, Kind kind, Domain da, Domain db, Make make, F f, G g) {
  return {case_name(dtype_of<T>, op), dtype_of<T>, [=](const RunOptions& o) -> std::string {
            for (int64_t n : o.sizes) {
              Array<T> a = make_input<T>(n, o.seed, da);
              Array<T> b = make_input<T>(n, o.seed + 1, db);
              using R = cpp_type_t<decltype(make(a, b))::dtype>;
              Array<R> out = poisoned<R>(n);
              if (o.compile_only)
                return compile_kernel(out, make(a, b));
              out = make(a, b);
              auto ha = host(a);
              auto hb = host(b);
              std::string err = compare(
                  out,
                  [&](size_t i) {
                    return reference<R>(kind, [&] { return f(to_double(ha(i)), to_double(hb(i))); },
                                        [&] { return g(to_int(ha(i)), to_int(hb(i))); });
                  },
                  [&](size_t i) {
                    return fmt::format("a = {}, b = {}", format_value(ha(i)), format_value(hb(i)));
                  },
                  kind == Kind::Transcendental);
              if (!err.empty())
                return fmt::format("n = {}, seed {}: {}", n, o.seed, err);
            }
            return "";
          }};
}

/// fma, clamp and where; where's first operand is a bool array.
template <typename T, typename C, typename Make, typename F, typename G>
OpCase ternary_case(std::string_view op, Domain dom, Make make, F f, G g) {
  return {case_name(dtype_of<T>, op), dtype_of<T>, [=](const RunOptions& o) -> std::string {
            for (int64_t n : o.sizes) {
              Array<C> a = make_input<C>(n, o.seed, dom);
              Array<T> b = make_input<T>(n, o.seed + 1, dom);
              Array<T> c = make_input<T>(n, o.seed + 2, dom);
              using R = cpp_type_t<decltype(make(a, b, c))::dtype>;
              Array<R> out = poisoned<R>(n);
              if (o.compile_only)
                return compile_kernel(out, make(a, b, c));
              out = make(a, b, c);
              auto ha = host(a);
              auto hb = host(b);
              auto hc = host(c);
              std::string err = compare(
                  out,
                  [&](size_t i) {
                    return reference<R>(
                        Kind::Arith,
                        [&] { return f(to_double(ha(i)), to_double(hb(i)), to_double(hc(i))); },
                        [&] { return g(to_int(ha(i)), to_int(hb(i)), to_int(hc(i))); });
                  },
                  [&](size_t i) {
                    return fmt::format("a = {}, b = {}, c = {}", format_value(ha(i)),
                                       format_value(hb(i)), format_value(hc(i)));
                  },
                  false);
              if (!err.empty())
                return fmt::format("n = {}, seed {}: {}", n, o.seed, err);
            }
            return "";
          }};
}

template <typename T, typename U> OpCase cast_case() {
  return {case_name(dtype_of<T>, fmt::format("cast<{}>", short_name(dtype_of<U>))), dtype_of<T>,
          [](const RunOptions& o) -> std::string {
            constexpr Domain wide{-300.0, 300.0, -300, 300};
            for (int64_t n : o.sizes) {
              Array<T> a = make_input<T>(n, o.seed, wide);
              Array<U> out = poisoned<U>(n);
              if (o.compile_only)
                return compile_kernel(out, cast<U>(a));
              out = cast<U>(a);
              auto ha = host(a);
              std::string err = compare(
                  out,
                  [&](size_t i) {
                    if constexpr (!std::is_integral_v<U>)
                      return round_to<U>(to_double(ha(i)));
                    else if constexpr (std::is_integral_v<T>)
                      return wrap_to<U>(to_int(ha(i)));
                    else
                      return saturate_to<U>(to_double(ha(i)));
                  },
                  [&](size_t i) { return fmt::format("a = {}", format_value(ha(i))); }, false);
              if (!err.empty())
                return fmt::format("n = {}, seed {}: {}", n, o.seed, err);
            }
            return "";
          }};
}

int64_t int_div(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? -a : a / b; }
int64_t int_mod(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }

#define GK_UNARY(op, kind, dom, expr, fexpr, iexpr)                                                \
  cases.push_back(unary_case<T>(                                                                   \
      op, Kind::kind, dom, [](const auto& a) { return expr; },                                     \
      [](double a) -> double { return fexpr; }, [](int64_t a) -> int64_t { return iexpr; }))
#define GK_BINARY(op, kind, da, db, expr, fexpr, iexpr)                                            \
  cases.push_back(binary_case<T>(                                                                  \
      op, Kind::kind, da, db, [](const auto& a, const auto& b) { return expr; },                   \
      [](double a, double b) -> double { return fexpr; },                                          \
      [](int64_t a, int64_t b) -> int64_t { return iexpr; }))
#define GK_TERNARY(op, C, expr, fexpr, iexpr)                                                      \
  cases.push_back(ternary_case<T, C>(                                                              \
      op, kGeneral, [](const auto& a, const auto& b, const auto& c) { return expr; },              \
      [](double a, double b, double c) -> double { return fexpr; },                                \
      [](int64_t a, int64_t b, int64_t c) -> int64_t { return iexpr; }))

template <typename T> void add_cases(std::vector<OpCase>& cases) {
  // Unary
  GK_UNARY("neg", Arith, kGeneral, -a, -a, -a);
  GK_UNARY("not", Predicate, kGeneral, !a, a == 0.0, a == 0);
  GK_UNARY("abs", Arith, kGeneral, abs(a), std::fabs(a), a < 0 ? -a : a);
  GK_UNARY("sqrt", Transcendental, kPositive, sqrt(a), std::sqrt(a), 0);
  GK_UNARY("rsqrt", Transcendental, kPositive, rsqrt(a), 1.0 / std::sqrt(a), 0);
  GK_UNARY("exp", Transcendental, kExp, exp(a), std::exp(a), 0);
  GK_UNARY("exp2", Transcendental, kExp, exp2(a), std::exp2(a), 0);
  GK_UNARY("log", Transcendental, kPositive, log(a), std::log(a), 0);
  GK_UNARY("log2", Transcendental, kPositive, log2(a), std::log2(a), 0);
  GK_UNARY("log10", Transcendental, kPositive, log10(a), std::log10(a), 0);
  GK_UNARY("sin", Transcendental, kGeneral, sin(a), std::sin(a), 0);
  GK_UNARY("cos", Transcendental, kGeneral, cos(a), std::cos(a), 0);
  GK_UNARY("tan", Transcendental, kTan, tan(a), std::tan(a), 0);
  GK_UNARY("tanh", Transcendental, kGeneral, tanh(a), std::tanh(a), 0);
  GK_UNARY("sigmoid", Transcendental, kExp, sigmoid(a), 1.0 / (1.0 + std::exp(-a)), 0);
  GK_UNARY("erf", Transcendental, kGeneral, erf(a), std::erf(a), 0);
  GK_UNARY("floor", Arith, kGeneral, floor(a), std::floor(a), a);
  GK_UNARY("ceil", Arith, kGeneral, ceil(a), std::ceil(a), a);
  GK_UNARY("round", Arith, kGeneral, round(a), std::round(a), a);

  // Binary
  GK_BINARY("add", Arith, kGeneral, kGeneral, a + b, a + b, a + b);
  GK_BINARY("sub", Arith, kGeneral, kGeneral, a - b, a - b, a - b);
  GK_BINARY("mul", Arith, kGeneral, kGeneral, a * b, a * b, a * b);
  GK_BINARY("div", Arith, kGeneral, kGeneral, a / b, a / b, int_div(a, b));
  GK_BINARY("mod", Arith, kGeneral, kGeneral, a % b, std::fmod(a, b), int_mod(a, b));
  GK_BINARY("min", Arith, kGeneral, kGeneral, min(a, b), std::fmin(a, b), std::min(a, b));
  GK_BINARY("max", Arith, kGeneral, kGeneral, max(a, b), std::fmax(a, b), std::max(a, b));
  GK_BINARY("pow", Transcendental, kPowBase, kPowExponent, pow(a, b), std::pow(a, b), 0);
  GK_BINARY("lt", Predicate, kGeneral, kGeneral, a < b, a < b, 0);
  GK_BINARY("le", Predicate, kGeneral, kGeneral, a <= b, a <= b, 0);
  GK_BINARY("gt", Predicate, kGeneral, kGeneral, a > b, a > b, 0);
  GK_BINARY("ge", Predicate, kGeneral, kGeneral, a >= b, a >= b, 0);
  GK_BINARY("eq", Predicate, kTan, kTan, a == b, a == b, 0); // narrow: equal values occur
  GK_BINARY("ne", Predicate, kTan, kTan, a != b, a != b, 0);
  GK_BINARY("and", Predicate, kTan, kTan, a && b, a != 0.0 && b != 0.0, 0);
  GK_BINARY("or", Predicate, kTan, kTan, a || b, a != 0.0 || b != 0.0, 0);

  // With a weak C++ scalar (docs/TYPES.md: it takes the array's type unless
  // its kind is higher).
  GK_UNARY("add_scalar", Arith, kGeneral, a + 3, a + 3, a + 3);
  GK_UNARY("mul_scalar", Arith, kGeneral, a * 2.5, a * 2.5, 0);
  GK_UNARY("rsub_scalar", Arith, kGeneral, 2 - a, 2 - a, 2 - a);
  GK_UNARY("div_scalar", Arith, kGeneral, a / 3, a / 3, a / 3);
  GK_UNARY("lt_scalar", Predicate, kGeneral, a < 2, a < 2, 0);
  GK_UNARY("max_scalar", Arith, kGeneral, max(a, 1), std::fmax(a, 1), std::max<int64_t>(a, 1));
  GK_UNARY("where_scalar", Arith, kGeneral, where(a > 1, a, 7), a > 1 ? a : 7, a > 1 ? a : 7);

  // Ternary
  GK_TERNARY("fma", T, fma(a, b, c), std::fma(a, b, c), a * b + c);
  GK_TERNARY("clamp", T, clamp(a, b, c), std::fmin(std::fmax(a, b), c),
             std::min(std::max(a, b), c));
  GK_TERNARY("where", bool, where(a, b, c), a != 0.0 ? b : c, a ? b : c);

  // Casts to every type
  cases.push_back(cast_case<T, bool>());
  cases.push_back(cast_case<T, uint8_t>());
  cases.push_back(cast_case<T, int32_t>());
  cases.push_back(cast_case<T, int64_t>());
  cases.push_back(cast_case<T, half>());
  cases.push_back(cast_case<T, bfloat16>());
  cases.push_back(cast_case<T, float>());
  cases.push_back(cast_case<T, double>());
}

} // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> c;
    add_cases<bool>(c);
    add_cases<uint8_t>(c);
    add_cases<int32_t>(c);
    add_cases<int64_t>(c);
    add_cases<half>(c);
    add_cases<bfloat16>(c);
    add_cases<float>(c);
    add_cases<double>(c);
    return c;
  }();
  return cases;
}

namespace {

class Ops : public ::testing::TestWithParam<size_t> {};

TEST_P(Ops, MatchesReference) {
  const OpCase& c = op_cases()[GetParam()];
  EXPECT_EQ(c.run({}), "") << c.name;
}

// The CUDA of every case compiles (NVRTC needs no GPU), so emitter
// mistakes show here before anything runs on a GPU.
TEST_P(Ops, KernelCompilesWithNvrtc) {
  if (!rt::Runtime::get().nvrtc())
    GTEST_SKIP() << "NVRTC is not available";
  const OpCase& c = op_cases()[GetParam()];
  RunOptions options;
  options.sizes = {1024};
  options.compile_only = true;
  EXPECT_EQ(c.run(options), "") << c.name;
}

std::string test_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = op_cases()[info.param].name;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryOpEveryType, Ops, ::testing::Range<size_t>(0, op_cases().size()),
                         test_name);

TEST(Ops, CoverEveryTypeAndOperation) {
  // 19 unary, 16 binary, 7 with a scalar, 3 ternary, 8 casts for each of 8 types.
  EXPECT_EQ(op_cases().size(), 8u * (19 + 16 + 7 + 3 + 8));
}

} // namespace
} // namespace gpukit::testing
