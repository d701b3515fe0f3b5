// Reductions on the CPU fallback (or the GPU where there is one) against
// float64 references computed here.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace gpukit {
namespace {

std::vector<double> host(const Array<float>& a) {
  std::vector<float> v = a.to_host();
  return {v.begin(), v.end()};
}

// float32 accumulation of n terms: relative error ~ n * 2^-24 in the worst
// case; the tolerances below are generous multiples of sqrt(n) * 2^-24.
constexpr double kF32 = 1e-4;

TEST(Reduce, FullSumOfProductMatchesFloat64) {
  const int64_t n = 100003;
  auto x = Array<float>::random({n}, 1, -1, 1).named("x");
  auto y = Array<float>::random({n}, 2, -1, 1).named("y");
  Array<float> s(Shape(1));
  s = sum(x * y);
  std::vector<double> hx = host(x), hy = host(y);
  double ref = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    ref += hx[i] * hy[i];
    mag += std::abs(hx[i] * hy[i]);
  }
  EXPECT_NEAR(s.item_sync(), ref, kF32 * mag);
}

TEST(Reduce, FullMinMaxMeanFused) {
  const int64_t n = 5000;
  auto a = Array<float>::random({n}, 3, -5, 5).named("a");
  auto b = Array<float>::random({n}, 4, -5, 5).named("b");
  std::vector<double> ha = host(a), hb = host(b);
  double mx = 0, mn = 1e30, avg = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = std::abs(ha[i] - hb[i]);
    mx = std::max(mx, d);
    mn = std::min(mn, d);
    avg += d;
  }
  avg /= n;
  auto m = eval(max(abs(a - b)));
  EXPECT_EQ(m.shape(), Shape::scalar());
  EXPECT_FLOAT_EQ(m.item_sync(), static_cast<float>(mx));
  EXPECT_FLOAT_EQ(eval(min(abs(a - b))).item_sync(), static_cast<float>(mn));
  EXPECT_NEAR(eval(mean(abs(a - b))).item_sync(), avg, kF32 * avg);
}

TEST(Reduce, IntegerSumWidensToInt64AndWraps) {
  // int32 sums accumulate in int64: 4 * 2^30 does not overflow.
  auto x = Array<int32_t>::full({4}, 1 << 30);
  Array<int64_t> s(Shape(1));
  s = sum(x);
  EXPECT_EQ(s.item_sync(), int64_t(4) << 30);
  // int64 wraps modulo 2^64 (documented in codegen/reduction.cpp).
  auto big = Array<int64_t>::full({2}, std::numeric_limits<int64_t>::max());
  s = sum(big);
  EXPECT_EQ(s.item_sync(), -2);
}

TEST(Reduce, AnyAllProd) {
  auto x = Array<int32_t>::from_host(std::vector<int32_t>{1, 2, 0, 3});
  EXPECT_FALSE(eval(all(x != 0)).item_sync());
  EXPECT_TRUE(eval(any(x == 3)).item_sync());
  EXPECT_EQ(eval(prod(x + 1)).item_sync(), 2 * 3 * 1 * 4);
}

TEST(Reduce, RowAndColumnSums) {
  const int64_t R = 37, C = 53;
  auto x = Array<float>::random({R, C}, 5, -1, 1).named("x");
  std::vector<double> hx = host(x);
  auto rows = eval(sum(x, 1));
  auto cols = eval(sum(x, 0));
  ASSERT_EQ(rows.shape(), Shape(R));
  ASSERT_EQ(cols.shape(), Shape(C));
  std::vector<double> hr = host(rows), hc = host(cols);
  for (int64_t r = 0; r < R; ++r) {
    double ref = 0;
    for (int64_t c = 0; c < C; ++c)
      ref += hx[r * C + c];
    EXPECT_NEAR(hr[r], ref, 1e-5) << "row " << r;
  }
  for (int64_t c = 0; c < C; ++c) {
    double ref = 0;
    for (int64_t r = 0; r < R; ++r)
      ref += hx[r * C + c];
    EXPECT_NEAR(hc[c], ref, 1e-5) << "column " << c;
  }
  EXPECT_EQ(eval(sum(x, -1, keepdims)).shape(), Shape({R, 1}));
}

TEST(Reduce, VarianceIsTwoPassDdof0) {
  const int64_t R = 8, C = 1000;
  // A large mean: a one-pass E[x^2] - E[x]^2 would lose every digit.
  auto x = Array<float>::random({R, C}, 6, 1000, 1001).named("x");
  std::vector<double> hx = host(x);
  auto v = eval(var(x, 1));
  auto vc = eval(var(x, 0));
  std::vector<double> hv = host(v), hvc = host(vc);
  for (int64_t r = 0; r < R; ++r) {
    double m = 0, s = 0;
    for (int64_t c = 0; c < C; ++c)
      m += hx[r * C + c];
    m /= C;
    for (int64_t c = 0; c < C; ++c)
      s += (hx[r * C + c] - m) * (hx[r * C + c] - m);
    EXPECT_NEAR(hv[r], s / C, 1e-3 * s / C);
  }
  for (int64_t c = 0; c < 3; ++c) {
    double m = 0, s = 0;
    for (int64_t r = 0; r < R; ++r)
      m += hx[r * C + c];
    m /= R;
    for (int64_t r = 0; r < R; ++r)
      s += (hx[r * C + c] - m) * (hx[r * C + c] - m);
    EXPECT_NEAR(hvc[c], s / R, 1e-3 * (s / R) + 1e-6);
  }
}

TEST(Reduce, SoftmaxIsOneFusedPlan) {
  const int64_t R = 16, C = 300;
  auto x = Array<float>::random({R, C}, 7, -4, 4).named("x");
  Array<float> out({R, C});
  out = exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1);
  KernelInfo info = inspect(out, exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1));
  EXPECT_EQ(info.name.find(' '), std::string::npos) << "one kernel: " << info.name;
  EXPECT_NE(info.ir.find("epilogue"), std::string::npos) << info.ir;
  std::vector<double> hx = host(x), ho = host(out);
  for (int64_t r = 0; r < R; ++r) {
    double m = -1e30, s = 0;
    for (int64_t c = 0; c < C; ++c)
      m = std::max(m, hx[r * C + c]);
    for (int64_t c = 0; c < C; ++c)
      s += std::exp(hx[r * C + c] - m);
    for (int64_t c = 0; c < C; ++c)
      ASSERT_NEAR(ho[r * C + c], std::exp(hx[r * C + c] - m) / s, 1e-6) << r << "," << c;
  }
}

TEST(Reduce, LayerNormWithPerColumnWeights) {
  const int64_t R = 9, C = 256;
  auto x = Array<float>::random({R, C}, 8, -2, 3).named("x");
  auto g = Array<float>::random({C}, 9, 0.5, 1.5).named("g");
  auto b = Array<float>::random({C}, 10, -1, 1).named("b");
  Array<float> out({R, C});
  out = (x - mean(x, 1)) * rsqrt(var(x, 1) + 1e-5f) * g + b;
  std::vector<double> hx = host(x), hg = host(g), hb = host(b), ho = host(out);
  for (int64_t r = 0; r < R; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < C; ++c)
      m += hx[r * C + c];
    m /= C;
    for (int64_t c = 0; c < C; ++c)
      v += (hx[r * C + c] - m) * (hx[r * C + c] - m);
    v /= C;
    for (int64_t c = 0; c < C; ++c)
      ASSERT_NEAR(ho[r * C + c], (hx[r * C + c] - m) / std::sqrt(v + 1e-5) * hg[c] + hb[c], 1e-4);
  }
}

TEST(Reduce, DeterministicBits) {
  const int64_t n = 1 << 18;
  auto x = Array<float>::random({n}, 11, -1, 1);
  float a = eval(sum(x * x)).item_sync();
  float b = eval(sum(x * x)).item_sync();
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
}

TEST(Reduce, HalfAccumulatesInFloat) {
  const int64_t n = 4096;
  auto x = Array<half>::full({n}, half(1.0f));
  // 4096 ones: a float16 accumulator would stop at 2048.
  EXPECT_EQ(static_cast<float>(eval(sum(x)).item_sync()), 4096.0f);
}

// argmin/argmax: the first index of the extreme value (ties: first wins),
// over all elements (flat index), rows and columns; values from a small
// set so that ties are everywhere.
template <typename T> void check_arg_reductions(int64_t R, int64_t C, unsigned seed) {
  std::vector<T> hv(static_cast<size_t>(R * C));
  std::srand(seed);
  for (size_t k = 0; k < hv.size(); ++k) // (std::vector<bool> has no T&)
    hv[k] = static_cast<T>(std::rand() % 5);
  auto x = Array<T>::from_host(hv, Shape({R, C})).named("x");
  auto first = [&](bool is_min, int64_t start, int64_t n, int64_t stride) {
    int64_t best = 0;
    for (int64_t k = 1; k < n; ++k) {
      T a = hv[start + k * stride], b = hv[start + best * stride];
      if (is_min ? a < b : a > b)
        best = k;
    }
    return best;
  };
  for (bool is_min : {true, false}) {
    SCOPED_TRACE(is_min ? "argmin" : "argmax");
    Array<int64_t> full = is_min ? eval(argmin(x)) : eval(argmax(x));
    ASSERT_EQ(full.shape(), Shape::scalar());
    EXPECT_EQ(full.to_host()[0], first(is_min, 0, R * C, 1));
    Array<int64_t> rows = is_min ? eval(argmin(x, 1)) : eval(argmax(x, 1));
    Array<int64_t> cols = is_min ? eval(argmin(x, 0)) : eval(argmax(x, 0));
    ASSERT_EQ(rows.shape(), Shape(R));
    ASSERT_EQ(cols.shape(), Shape(C));
    std::vector<int64_t> hr = rows.to_host(), hc = cols.to_host();
    for (int64_t r = 0; r < R; ++r)
      EXPECT_EQ(hr[r], first(is_min, r * C, C, 1)) << "row " << r;
    for (int64_t c = 0; c < C; ++c)
      EXPECT_EQ(hc[c], first(is_min, c, R, C)) << "column " << c;
  }
}

TEST(Reduce, ArgMinArgMaxFirstIndexEveryDType) {
  for (auto [R, C] : {std::pair<int64_t, int64_t>{37, 53}, {300, 64}, {5, 4096}}) {
    check_arg_reductions<float>(R, C, 11);
    check_arg_reductions<double>(R, C, 12);
    check_arg_reductions<int32_t>(R, C, 13);
    check_arg_reductions<int64_t>(R, C, 14);
    check_arg_reductions<uint8_t>(R, C, 15);
    check_arg_reductions<bool>(R, C, 16);
  }
}

TEST(Reduce, ArgMinArgMaxSkipNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = Array<float>::from_host(std::vector<float>{nan, 3, -2, nan, -2, 7, 7, nan}).named("x");
  EXPECT_EQ(eval(argmin(x)).to_host()[0], 2);
  EXPECT_EQ(eval(argmax(x)).to_host()[0], 5);
  auto all_nan = Array<float>::from_host(std::vector<float>{nan, nan, nan}).named("n");
  EXPECT_EQ(eval(argmin(all_nan)).to_host()[0], 0);
  EXPECT_EQ(eval(argmax(all_nan)).to_host()[0], 0);
}

TEST(Reduce, WrongOutputShapeIsAShapeError) {
  auto x = Array<float>::random({4, 5}, 12);
  Array<float> out(Shape(5));
  EXPECT_THROW(out = sum(x, 1), Error);
}

} // namespace
} // namespace gpukit
