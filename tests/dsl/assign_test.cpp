// Assignment on the CPU fallback (and on the GPU when there is one): one
// kernel per expression type, built once; scalars are arguments; several
// outputs share one kernel; in-place updates read the old values.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpukit {
namespace {

TEST(Assign, SaxpyComputesTheExpression) {
  auto x = Array<float>::random({1000}, 1, -1.0, 1.0).named("x");
  auto y = Array<float>::random({1000}, 2, -1.0, 1.0).named("y");
  Array<float> out(x.shape());
  out = 2.0f * x + sin(y);
  std::vector<float> hx = x.to_host(), hy = y.to_host(), ho = out.to_host();
  for (size_t i = 0; i < ho.size(); ++i)
    ASSERT_NEAR(ho[i], 2.0f * hx[i] + std::sin(hy[i]), 1e-6f) << i;
}

TEST(Assign, SecondAssignmentOfTheSameTypeDoesNotBuildAgain) {
  auto x = Array<float>::arange({257});
  Array<float> out(x.shape());
  auto run = [&](float a) { out = a * x - 1.0f; };
  run(0.5f);
  uint64_t builds = expression_stats().ir_builds;
  // New scalar values: no new kernel. (None equals the 1.0f: equal scalars
  // would make another variant, see EqualScalarsShareOneKernelScalar.)
  for (int k = 0; k < 5; ++k)
    run(static_cast<float>(k) + 0.25f);
  EXPECT_EQ(expression_stats().ir_builds, builds);
  std::vector<float> h = out.to_host();
  EXPECT_FLOAT_EQ(h[10], 4.25f * 10.0f - 1.0f);
}

// `auto e = a * x;` used twice holds a twice, in two scalar slots: equal
// values become one kernel scalar, so CSE computes a * x once. A new value
// keeping the same equalities reuses the kernel; a changed pattern builds
// one more variant, and only a few patterns ever are built.
TEST(Assign, EqualScalarsShareOneKernelScalar) {
  auto x = Array<float>::arange({300}).named("x");
  Array<float> out(x.shape());
  out.named("out");
  auto expr = [&](float a, float b) {
    auto e = a * x + b;
    return e * e + sqrt(e);
  };
  auto run = [&](float a, float b) { out = expr(a, b); };
  run(2.0f, 3.0f);
  std::string merged = source_of(out, expr(2.0f, 3.0f));
  EXPECT_EQ(merged.find("s2"), std::string::npos) << merged; // s0 and s1 only
  EXPECT_EQ(merged.find("s3"), std::string::npos) << merged;
  EXPECT_NE(merged.find("float s0, float s1"), std::string::npos) << merged;

  uint64_t builds = expression_stats().ir_builds;
  for (int k = 1; k < 6; ++k)
    run(0.5f * k, 1.0f + k); // same pattern: slots 0, 2 and 4 equal, 1, 3 and 5 equal
  EXPECT_EQ(expression_stats().ir_builds, builds);
  std::vector<float> h = out.to_host();
  auto reference = [](double e) { return e * e + std::sqrt(e); };
  EXPECT_FLOAT_EQ(h[7], static_cast<float>(reference(2.5 * 7 + 6.0)));

  // Another pattern (a == b everywhere): one more variant, then reused.
  run(4.0f, 4.0f);
  EXPECT_EQ(expression_stats().ir_builds, builds + 1);
  run(5.0f, 5.0f);
  EXPECT_EQ(expression_stats().ir_builds, builds + 1);
  EXPECT_FLOAT_EQ(out.to_host()[3], static_cast<float>(reference(5.0 * 3 + 5.0)));

  // Values that differ per slot are another pattern; correct either way.
  out = (2.0f * x + 1.0f) * (3.0f * x + 1.0f) + sqrt(2.0f * x + 1.0f);
  EXPECT_FLOAT_EQ(out.to_host()[2], static_cast<float>(5.0 * 7.0 + std::sqrt(5.0)));

  // The number of patterns is bounded: after a few, slots are passed apart.
  // Four slots, each 1, 2 or 3: 14 patterns with some equal values.
  auto poly = [&](float a, float b, float c, float d) { out = a * x + b * x * x + c * x * x * x + d; };
  poly(1.0f, 2.0f, 3.0f, 4.0f);
  uint64_t before = expression_stats().ir_builds;
  for (int k = 0; k < 81; ++k)
    poly(1.0f + k % 3, 1.0f + k / 3 % 3, 1.0f + k / 9 % 3, 1.0f + k / 27 % 3);
  EXPECT_EQ(expression_stats().ir_builds - before, detail::KernelVariants::kMaxScalarPatterns);
  poly(3.0f, 2.0f, 2.0f, 1.0f);
  EXPECT_FLOAT_EQ(out.to_host()[2], 3.0f * 2 + 2.0f * 4 + 2.0f * 8 + 1.0f);
}

TEST(Assign, OtherArraysOfTheSameTypeReuseTheKernel) {
  auto a = Array<double>::arange({100});
  auto b = Array<double>::arange({100}, 1.0);
  Array<double> out(a.shape());
  auto run = [&](const Array<double>& u, const Array<double>& v) { out = u * v; };
  run(a, b);
  uint64_t builds = expression_stats().ir_builds;
  auto c = Array<double>::full({100}, 3.0);
  run(b, c);
  EXPECT_EQ(expression_stats().ir_builds, builds);
  EXPECT_DOUBLE_EQ(out.to_host()[7], 8.0 * 3.0);
}

TEST(Assign, AliasingMakesANewVariant) {
  auto a = Array<float>::arange({64});
  auto b = Array<float>::arange({64});
  Array<float> out(a.shape());
  auto run = [&](const Array<float>& u, const Array<float>& v) { out = u + v * 3.0f; };
  run(a, b);
  uint64_t builds = expression_stats().ir_builds;
  run(a, a); // one buffer for both operands: another variant, built once
  EXPECT_EQ(expression_stats().ir_builds, builds + 1);
  run(b, b);
  EXPECT_EQ(expression_stats().ir_builds, builds + 1);
  EXPECT_FLOAT_EQ(out.to_host()[5], 20.0f);
}

TEST(Assign, InPlaceUpdateReadsTheOldValues) {
  auto x = Array<int32_t>::arange({1023});
  x = x * 2 + 1;
  x += 5;
  x *= x;
  std::vector<int32_t> h = x.to_host();
  for (int32_t i = 0; i < 1023; ++i)
    ASSERT_EQ(h[i], (2 * i + 6) * (2 * i + 6));
}

TEST(Assign, ScalarsAndCopies) {
  Array<float> out(5);
  out = 1.5f;
  EXPECT_EQ(out.to_host(), std::vector<float>(5, 1.5f));
  auto x = Array<float>::arange({5});
  out = x;
  EXPECT_EQ(out.to_host(), x.to_host());
  Array<float> y = x.copy();
  EXPECT_EQ(y.to_host(), x.to_host());
  EXPECT_FALSE(y.shares_buffer_with(x));
}

TEST(Assign, ShareSeesTheSameBuffer) {
  auto x = Array<float>::full({8}, 1.0f);
  Array<float> alias = x.share();
  EXPECT_TRUE(alias.shares_buffer_with(x));
  alias = alias + 1.0f;
  EXPECT_EQ(x.to_host(), std::vector<float>(8, 2.0f));
  Array<float> out(8);
  out = x * alias; // two leaves on one buffer: one kernel input
  EXPECT_EQ(out.to_host(), std::vector<float>(8, 4.0f));
}

TEST(Assign, MultipleOutputsInOneKernel) {
  auto x = Array<float>::arange({3000}).named("x");
  Array<float> a(x.shape()), b(x.shape());
  Array<int64_t> c(x.shape());
  uint64_t runs = expression_stats().cpu_runs + expression_stats().gpu_launches;
  assign(a, x + 1.0f, b, x * 2.0f, c, cast<int64_t>(x) * 3);
  EXPECT_EQ(expression_stats().cpu_runs + expression_stats().gpu_launches, runs + 1);
  std::vector<float> ha = a.to_host(), hb = b.to_host();
  std::vector<int64_t> hc = c.to_host();
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(ha[i], i + 1.0f);
    ASSERT_EQ(hb[i], i * 2.0f);
    ASSERT_EQ(hc[i], i * 3);
  }
}

TEST(Assign, MultipleOutputsReadTheOldValues) {
  auto x = Array<float>::arange({1029}).named("x");
  Array<float> y(x.shape());
  assign(x, x + 1.0f, y, x * 2.0f);
  std::vector<float> hx = x.to_host(), hy = y.to_host();
  for (int i = 0; i < 1029; ++i) {
    ASSERT_EQ(hx[i], i + 1.0f);
    ASSERT_EQ(hy[i], i * 2.0f);
  }
}

// The second output reads the array the first one writes: z = 2 * old x.
// The kernel loads every input before its first store and, its pointers
// aliasing, marks none __restrict__.
TEST(Assign, OutputAliasingAnInputReadsTheOldValue) {
  for (int64_t n : {1, 7, 1029}) {
    auto x = Array<float>::arange({n}).named("x");
    auto y = Array<float>::full({n}, 10.0f).named("y");
    Array<float> z(x.shape());
    z.named("z");
    assign(x, y + 1.0f, z, x * 2.0f);
    std::vector<float> hx = x.to_host(), hz = z.to_host();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(hx[i], 11.0f) << i;
      ASSERT_EQ(hz[i], 2.0f * static_cast<float>(i)) << i;
    }
    std::string source = inspect(x, y + 1.0f, z, x * 2.0f).source;
    EXPECT_EQ(source.find("__restrict__"), std::string::npos) << source;
    EXPECT_NE(source.find("const float x_in_v = x_in[i];"), std::string::npos) << source;
  }
  // Without aliasing the pointers stay __restrict__.
  auto a = Array<float>::arange({8}), b = Array<float>::arange({8});
  Array<float> c(8), d(8);
  EXPECT_NE(inspect(c, a + 1.0f, d, b * 2.0f).source.find("__restrict__"), std::string::npos);
}

TEST(Assign, EvalAndExpressionConstructor) {
  auto x = Array<half>::full({33}, half(1.5f));
  auto y = eval(x * 2.0f); // f16 stays f16 with a weak scalar
  static_assert(std::is_same_v<decltype(y), Array<half>>);
  EXPECT_EQ(static_cast<float>(y.to_host()[32]), 3.0f);
  Array<double> z(x + 1);
  EXPECT_EQ(z.to_host()[0], 2.5);
  EXPECT_EQ(z.shape(), x.shape());
}

TEST(Assign, EmptyArraysRunNothing) {
  Array<float> x(0), out(0);
  uint64_t builds = expression_stats().ir_builds;
  out = x + 1.0f;
  EXPECT_EQ(expression_stats().ir_builds, builds);
}

TEST(Assign, MultiDimensionalShapes) {
  auto x = Array<float>::arange({4, 3, 2});
  Array<float> out(Shape{4, 3, 2});
  out = x * x;
  EXPECT_EQ(out.to_host()[23], 23.0f * 23.0f);
  EXPECT_EQ(out.shape().to_string(), "[4, 3, 2]");
}

TEST(Assign, BoolArrays) {
  auto x = Array<int32_t>::arange({10});
  Array<bool> even(x.shape());
  even = x % 2 == 0;
  std::vector<bool> h = even.to_host();
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(h[i], i % 2 == 0);
  Array<int32_t> n(x.shape());
  n = where(even, x, -x);
  EXPECT_EQ(n.to_host()[3], -3);
}

} // namespace
} // namespace gpukit
