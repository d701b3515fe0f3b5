// Views and broadcasting on the GPU (the strided kernels of
// codegen/cuda_strided_emitter.hpp) against a float64 host reference:
// fresh random inputs (the seed is printed), outputs poisoned with NaN
// first, so an element the kernel never writes fails. Skipped without a GPU.
#include "op_reference.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace gpukit::testing {
namespace {

// Sizes that are not multiples of a block or a pack, and large enough that
// the grid-stride loop wraps (several steps per thread carry across rows).
constexpr int64_t kRows = 1031, kCols = 777;
/// Each expected value is one float add or multiply, rounded once (relative
/// error <= 2^-24); 1e-6 leaves room without hiding a wrong element.
constexpr Tolerance kFloatOp{1e-6, 1e-30};

class GpuViews : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Runtime& runtime = rt::Runtime::get();
    if (!runtime.on_gpu())
      GTEST_SKIP() << "no GPU: " << runtime.fallback_reason();
    Seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::printf("GpuViews seed %llu\n", static_cast<unsigned long long>(Seed));
  }
  uint64_t next_seed() { return Seed++; }

  /// NaN-filled [rows, cols] float output.
  static Array<float> poisoned_2d(int64_t rows, int64_t cols) {
    return Array<float>::full({rows, cols}, std::numeric_limits<float>::quiet_NaN());
  }
  /// Every element of `actual` (row-major) close to `expected(r, c)`; NaN fails.
  template <typename F>
  static void expect_matrix(const std::vector<float>& actual, int64_t rows, int64_t cols, F expected,
                            Tolerance tol = kFloatOp) {
    ASSERT_EQ(actual.size(), static_cast<size_t>(rows * cols));
    int failures = 0;
    for (int64_t r = 0; r < rows && failures < 10; ++r)
      for (int64_t c = 0; c < cols && failures < 10; ++c) {
        double e = expected(r, c);
        float a = actual[static_cast<size_t>(r * cols + c)];
        if (std::isnan(a) || !close_enough(a, e, tol)) {
          ADD_FAILURE() << "element [" << r << ", " << c << "]: got " << a << ", expected " << e;
          ++failures;
        }
      }
  }

  uint64_t Seed = 0;
};

TEST_F(GpuViews, BroadcastAddRow) {
  auto x = Array<float>::random({kRows, kCols}, next_seed(), -2.0, 2.0).named("x");
  auto b = Array<float>::random({kCols}, next_seed(), -2.0, 2.0).named("b");
  Array<float> out = poisoned_2d(kRows, kCols);
  out = x + b;
  std::vector<float> hx = x.to_host(), hb = b.to_host();
  expect_matrix(out.to_host(), kRows, kCols,
                [&](int64_t r, int64_t c) { return double(hx[r * kCols + c]) + double(hb[c]); });
}

TEST_F(GpuViews, ColumnScale) {
  auto x = Array<float>::random({kRows, kCols}, next_seed(), -2.0, 2.0).named("x");
  auto s = Array<float>::random({kRows, 1}, next_seed(), -2.0, 2.0).named("s");
  Array<float> out = poisoned_2d(kRows, kCols);
  out = x * s;
  std::vector<float> hx = x.to_host(), hs = s.to_host();
  expect_matrix(out.to_host(), kRows, kCols,
                [&](int64_t r, int64_t c) { return double(hx[r * kCols + c]) * double(hs[r]); });
}

TEST_F(GpuViews, TransposeCopy) {
  auto m = Array<float>::random({kRows, kCols}, next_seed(), -2.0, 2.0).named("m");
  Array<float> out = poisoned_2d(kCols, kRows);
  out = m.transpose();
  std::vector<float> hm = m.to_host();
  // A copy is exact.
  expect_matrix(out.to_host(), kCols, kRows, [&](int64_t r, int64_t c) { return double(hm[c * kCols + r]); },
                {0.0, 0.0});
}

TEST_F(GpuViews, SlicedStepViewAsInput) {
  auto m = Array<float>::random({kRows, kCols}, next_seed(), -2.0, 2.0).named("m");
  // m[1::3, ::-2]: a row offset, a row step and a reversed column step.
  auto v = m.slice({Slice(1, kRows, 3), Slice::reversed()}).slice(1, Slice(0, kCols, 2));
  int64_t rows = (kRows - 1 + 2) / 3, cols = (kCols + 1) / 2;
  ASSERT_EQ(v.shape(), Shape({rows, cols}));
  Array<float> out = poisoned_2d(rows, cols);
  out = v * 2.0f + 1.0f;
  std::vector<float> hm = m.to_host();
  expect_matrix(out.to_host(), rows, cols, [&](int64_t r, int64_t c) {
    return 2.0 * double(hm[(1 + 3 * r) * kCols + (kCols - 1 - 2 * c)]) + 1.0;
  });
}

TEST_F(GpuViews, AssignIntoSlicedViewLeavesTheRestUntouched) {
  // The untouched elements keep a NaN sentinel: a stray write replaces it.
  auto m = Array<float>::full({kRows, kCols}, std::numeric_limits<float>::quiet_NaN()).named("m");
  auto src = Array<float>::random({kRows, kCols}, next_seed(), -2.0, 2.0).named("src");
  // m[2:-1:2, 3::5] = src[2:-1:2, 3::5] + 0.5
  auto dst = m.slice({Slice(2, kRows - 1, 2), Slice::from(3)}).slice(1, Slice(0, kCols, 5));
  auto sv = src.slice({Slice(2, kRows - 1, 2), Slice::from(3)}).slice(1, Slice(0, kCols, 5));
  dst = sv + 0.5f;
  std::vector<float> hm = m.to_host(), hs = src.to_host();
  int failures = 0;
  for (int64_t r = 0; r < kRows && failures < 10; ++r)
    for (int64_t c = 0; c < kCols && failures < 10; ++c) {
      float a = hm[r * kCols + c];
      bool inside = r >= 2 && r < kRows - 1 && (r - 2) % 2 == 0 && c >= 3 && (c - 3) % 5 == 0;
      if (!inside) {
        if (!std::isnan(a)) {
          ADD_FAILURE() << "element [" << r << ", " << c << "] outside the view was written: " << a;
          ++failures;
        }
        continue;
      }
      double e = double(hs[r * kCols + c]) + 0.5;
      if (std::isnan(a) || !close_enough(a, e, kFloatOp)) {
        ADD_FAILURE() << "element [" << r << ", " << c << "]: got " << a << ", expected " << e;
        ++failures;
      }
    }
}

} // namespace
} // namespace gpukit::testing
