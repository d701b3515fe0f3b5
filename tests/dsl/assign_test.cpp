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
  run(1.0f);
  uint64_t builds = expression_stats().ir_builds;
  for (int k = 0; k < 5; ++k)
    run(static_cast<float>(k)); // new scalar values: no new kernel
  EXPECT_EQ(expression_stats().ir_builds, builds);
  std::vector<float> h = out.to_host();
  EXPECT_FLOAT_EQ(h[10], 4.0f * 10.0f - 1.0f);
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
