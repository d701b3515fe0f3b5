// GPUKIT_DEVICE_FUNCTION: one body, used as CUDA in the kernel and compiled
// as the host implementation for the CPU fallback.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <cmath>

GPUKIT_DEVICE_FUNCTION(float, softplus, (float, x), { return x > 20.0f ? x : log1pf(expf(x)); });
GPUKIT_DEVICE_FUNCTION(float, lerp, (float, a, float, b, float, t), { return fmaf(t, b - a, a); });
GPUKIT_DEVICE_FUNCTION(int32_t, collatz, (int32_t, n), {
  int32_t steps = 0;
  while (n > 1 && steps < 1000) {
    n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
    ++steps;
  }
  return steps;
});
GPUKIT_DEVICE_FUNCTION(double, hypot4, (double, a, double, b, double, c, double, d),
                       { return sqrt(a * a + b * b + c * c + d * d); });
GPUKIT_DEVICE_FUNCTION(bool, in_unit_disc, (float, x, float, y), { return x * x + y * y <= 1.0f; });
GPUKIT_DEVICE_FUNCTION(float, fast_inverse_root, (float, x), { return rsqrtf(x); });

namespace gpukit {
namespace {

TEST(DeviceFunction, RunsOnTheBackendInUse) {
  auto x = Array<float>::random({1029}, 3, -30.0, 30.0).named("x");
  Array<float> out(x.shape());
  out = softplus(x) * 2.0f;
  std::vector<float> hx = x.to_host(), ho = out.to_host();
  for (size_t i = 0; i < hx.size(); ++i) {
    float ref = hx[i] > 20.0f ? hx[i] : std::log1p(std::exp(hx[i]));
    ASSERT_NEAR(ho[i], 2.0f * ref, 4e-6f * std::fabs(2.0f * ref) + 1e-30f) << i;
  }
}

TEST(DeviceFunction, SeveralParametersAndFunctions) {
  auto a = Array<float>::random({100}, 4).named("a");
  auto b = Array<float>::random({100}, 5).named("b");
  Array<float> out(a.shape());
  out = lerp(a, b, 0.25f) + softplus(a - b) + lerp(b, a, 0.5f);
  std::vector<float> ha = a.to_host(), hb = b.to_host(), ho = out.to_host();
  for (size_t i = 0; i < ha.size(); ++i) {
    float ref = std::fma(0.25f, hb[i] - ha[i], ha[i]) + std::log1p(std::exp(ha[i] - hb[i])) +
                std::fma(0.5f, ha[i] - hb[i], hb[i]);
    ASSERT_NEAR(ho[i], ref, 1e-5f) << i;
  }
}

TEST(DeviceFunction, IntegerBodyWithLoops) {
  auto n = Array<int32_t>::arange({30}, 1.0);
  Array<int32_t> steps(n.shape());
  steps = collatz(n);
  std::vector<int32_t> h = steps.to_host();
  EXPECT_EQ(h[0], 0);  // 1
  EXPECT_EQ(h[5], 8);  // 6 -> 3 -> 10 -> 5 -> 16 -> 8 -> 4 -> 2 -> 1
  EXPECT_EQ(h[26], 111); // 27
}

TEST(DeviceFunction, ArgumentsConvertToTheParameterTypes) {
  auto a = Array<int32_t>::arange({5}).named("a");
  Array<double> out(a.shape());
  out = hypot4(a, 0, a, 0.0f); // int array, int and float scalars -> double
  EXPECT_DOUBLE_EQ(out.to_host()[3], std::sqrt(18.0));
  auto x = Array<float>::arange({4}, -1.0, 0.5);
  Array<bool> inside(x.shape());
  inside = in_unit_disc(x, 0.5f);
  EXPECT_EQ(inside.to_host(), (std::vector<bool>{false, true, true, true}));
}

TEST(DeviceFunction, PlainNumbersCallTheHostVersion) {
  static_assert(std::is_same_v<decltype(softplus(1.0f)), float>);
  EXPECT_FLOAT_EQ(softplus(30.0f), 30.0f);
  EXPECT_FLOAT_EQ(lerp(1.0f, 3.0f, 0.5f), 2.0f);
  EXPECT_FLOAT_EQ(fast_inverse_root(4.0f), 0.5f); // rsqrtf: gpukit::device_math on the host
}

TEST(DeviceFunction, RegisteredOnceWithTheBodyText) {
  const ir::UserFunction& f = detail::user_function<gpukit_device_function_lerp>();
  EXPECT_EQ(&f, &detail::user_function<gpukit_device_function_lerp>());
  EXPECT_EQ(f.name, "lerp");
  EXPECT_EQ(f.body, "return fmaf(t, b - a, a);");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[2].name, "t");
  EXPECT_EQ(f.params[2].type, DType::Float32);
  EXPECT_EQ(f.result, DType::Float32);
  float args[3] = {1.0f, 5.0f, 0.25f}, result = 0;
  const void* ptrs[3] = {&args[0], &args[1], &args[2]};
  f.host(ptrs, &result);
  EXPECT_EQ(result, 2.0f);
}

TEST(DeviceFunction, AppearsInTheKernelSource) {
  auto x = Array<float>::arange({8}).named("x");
  Array<float> out(8);
  KernelInfo k = inspect(out, softplus(x) + softplus(x * 2.0f));
  EXPECT_TRUE(k.label.starts_with("out = softplus(x) + softplus(x * 2)")) << k.label;
  EXPECT_NE(k.source.find("log1pf(expf(x))"), std::string::npos) << k.source;
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.nvrtc())
    GTEST_SKIP() << "NVRTC is not available to compile the source";
  EXPECT_NO_THROW(runtime.kernels().get({k.name, k.source}));
  Array<int32_t> steps(8);
  KernelInfo c = inspect(steps, collatz(cast<int32_t>(x)));
  EXPECT_NO_THROW(runtime.kernels().get({c.name, c.source})) << c.source;
}

} // namespace
} // namespace gpukit
