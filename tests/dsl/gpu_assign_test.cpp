// Assignment on the GPU: the hot path launches without building, large and
// odd sizes, several outputs, in-place updates, 64-bit indexing, user
// functions and raw kernels. Skipped without a GPU.
#include "op_reference.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

GPUKIT_DEVICE_FUNCTION(float, gpu_softplus, (float, x), { return x > 20.0f ? x : log1pf(expf(x)); });

namespace gpukit::testing {
namespace {

class GpuAssign : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Runtime& runtime = rt::Runtime::get();
    if (!runtime.on_gpu())
      GTEST_SKIP() << "no GPU: " << runtime.fallback_reason();
  }
};

TEST_F(GpuAssign, HotPathLaunchesWithoutBuilding) {
  auto x = Array<float>::random({(1 << 22) + 1}, 11, -1.0, 1.0).named("x");
  auto y = Array<float>::random({(1 << 22) + 1}, 12, -1.0, 1.0).named("y");
  Array<float> out = poisoned<float>(x.size());
  auto run = [&](float a) { out = a * x + sin(y); };
  run(2.0f);
  ExpressionStats before = expression_stats();
  rt::KernelCacheStats cache = rt::Runtime::get().kernels().stats();
  for (int k = 0; k < 10; ++k)
    run(static_cast<float>(k));
  ExpressionStats after = expression_stats();
  EXPECT_EQ(after.ir_builds, before.ir_builds);
  EXPECT_EQ(after.gpu_launches, before.gpu_launches + 10);
  EXPECT_EQ(rt::Runtime::get().kernels().stats().compiles, cache.compiles);
  std::vector<float> hx = x.to_host(), hy = y.to_host(), ho = out.to_host();
  for (size_t i = 0; i < ho.size(); ++i)
    ASSERT_TRUE(close_enough(ho[i], 9.0 * hx[i] + std::sin(double(hy[i])), {2e-6, 1e-6})) << i;
}

TEST_F(GpuAssign, HostOverheadOfAWarmAssignment) {
  // Reported, not asserted: the host time one warm assignment costs (shape
  // checks, variant lookup, argument packing, cuLaunchKernel).
  auto x = Array<float>::full({1}, 1.0f);
  auto y = Array<float>::full({1}, 2.0f);
  Array<float> out(1);
  out = x * 3.0f + y;
  rt::Runtime::get().synchronize();
  constexpr int kCalls = 5000;
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kCalls; ++k)
    out = x * 3.0f + y;
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  rt::Runtime::get().synchronize();
  std::printf("warm assignment: %.2f us of host time per call (%d calls)\n", us / kCalls, kCalls);
  EXPECT_EQ(out.to_host()[0], 5.0f);
}

TEST_F(GpuAssign, MultipleOutputsAndInPlace) {
  int64_t n = 3 * 1024 * 1024 + 7;
  auto x = Array<float>::random({n}, 13, 0.0, 1.0).named("x");
  auto y = Array<float>::random({n}, 14, 0.0, 1.0).named("y");
  std::vector<float> hx = x.to_host(), hy = y.to_host();
  Array<float> z = poisoned<float>(n);
  // x is written by the first output and read by the second: both read the old x.
  assign(x, y + 1.0f, z, x * 2.0f);
  std::vector<float> nx = x.to_host(), nz = z.to_host();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(nx[i], hy[i] + 1.0f) << i;
    ASSERT_EQ(nz[i], hx[i] * 2.0f) << i;
  }
  y += y * 0.5f;
  std::vector<float> ny = y.to_host();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(ny[i], hy[i] + hy[i] * 0.5f) << i;
}

// Sizes the scalar tail loop handles alone (n < one pack, odd remainders):
// the second output still reads the old x, and no pointer is __restrict__.
TEST_F(GpuAssign, AliasedOutputReadsOldInputInTheTailLoop) {
  for (int64_t n : {1, 3, 7, 1029, 4099}) {
    auto x = Array<float>::random({n}, 15, -1.0, 1.0).named("x");
    auto y = Array<float>::random({n}, 16, -1.0, 1.0).named("y");
    std::vector<float> hx = x.to_host(), hy = y.to_host();
    Array<float> z = poisoned<float>(n);
    assign(x, y + 1.0f, z, x * 2.0f);
    std::vector<float> nx = x.to_host(), nz = z.to_host();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(nx[i], hy[i] + 1.0f) << n << " " << i;
      ASSERT_EQ(nz[i], hx[i] * 2.0f) << n << " " << i; // 2 * old x; NaN never passes
    }
    EXPECT_EQ(inspect(x, y + 1.0f, z, x * 2.0f).source.find("__restrict__"), std::string::npos);
  }
}

TEST_F(GpuAssign, SixtyFourBitIndexing) {
  // 2^31 + 5 one-byte elements: n needs the 64-bit loop index.
  int64_t n = (int64_t(1) << 31) + 5;
  Array<uint8_t> x(n);
  x = 7;
  Array<uint8_t> out = poisoned<uint8_t>(n);
  out = x * 3 + 1;
  std::vector<uint8_t> h = out.to_host();
  size_t bad = 0;
  for (uint8_t v : h)
    bad += v != 22;
  EXPECT_EQ(bad, 0u);
}

TEST_F(GpuAssign, UserFunction) {
  auto x = Array<float>::random({100003}, 15, -30.0, 30.0).named("x");
  Array<float> out = poisoned<float>(x.size());
  out = gpu_softplus(x) * 2.0f;
  std::vector<float> hx = x.to_host(), ho = out.to_host();
  for (size_t i = 0; i < hx.size(); ++i) {
    double ref = hx[i] > 20.0f ? hx[i] : std::log1p(std::exp(double(hx[i])));
    ASSERT_TRUE(close_enough(ho[i], 2.0 * ref, {4e-6, 1e-30})) << i << ": " << hx[i];
  }
}

TEST_F(GpuAssign, RawKernel) {
  RawKernel axpy(R"(extern "C" __global__ void axpy(float* y, const float* x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
  })", "axpy");
  unsigned n = 100000;
  auto x = Array<float>::arange({n});
  auto y = Array<float>::full({n}, 1.0f);
  axpy.launch((n + 255) / 256, 256, y, x, 2.0f, n);
  std::vector<float> h = y.to_host();
  for (unsigned i = 0; i < n; ++i)
    ASSERT_EQ(h[i], 2.0f * i + 1.0f) << i;
}

} // namespace
} // namespace gpukit::testing
