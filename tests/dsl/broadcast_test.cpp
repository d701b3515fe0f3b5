// Broadcasting against a straightforward host implementation: random shapes
// with size-1 axes, empty arrays, 0-d operands and odd sizes, on the CPU
// fallback (and on the GPU when there is one: the same code path picks the
// backend). The GpuZeroD tests check 0-d operands on the GPU against a
// float64 reference and skip without one.
#include "op_reference.hpp"

#include "runtime/nvrtc_api.hpp"
#include "runtime/nvrtc_compiler.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace {

using gpukit::Array;
using gpukit::Shape;

std::vector<int64_t> row_major(const std::vector<int64_t>& extents) {
  std::vector<int64_t> s(extents.size());
  int64_t step = 1;
  for (size_t k = extents.size(); k-- > 0;) {
    s[k] = step;
    step *= extents[k];
  }
  return s;
}

/// Element `i` (row-major in `out`) of `in` broadcast to `out`.
int64_t source_index(const std::vector<int64_t>& out, const std::vector<int64_t>& in, int64_t i) {
  std::vector<int64_t> os = row_major(out), is = row_major(in);
  size_t lead = out.size() - in.size();
  int64_t src = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t idx = (i / os[k]) % out[k];
    if (k >= lead && in[k - lead] != 1)
      src += idx * is[k - lead];
  }
  return src;
}

Shape shape_of(const std::vector<int64_t>& e) { return Shape::of(e); }

TEST(Broadcast, RandomShapesAgainstHost) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    unsigned rank = 1 + rng() % 4;
    std::vector<int64_t> out(rank);
    for (auto& e : out)
      e = std::vector<int64_t>{1, 2, 3, 5, 7, 17, 33}[rng() % 7];
    if (trial % 15 == 0)
      out[rng() % rank] = 0; // empty
    auto operand = [&] {
      unsigned r = 1 + rng() % rank;
      std::vector<int64_t> s(out.end() - r, out.end());
      for (auto& e : s)
        if (rng() % 3 == 0)
          e = 1;
      return s;
    };
    std::vector<int64_t> xs = operand(), ys = operand();
    auto x = Array<float>::random(shape_of(xs), 100 + trial, -1, 1);
    auto y = Array<float>::random(shape_of(ys), 200 + trial, -1, 1);
    Array<float> z(shape_of(out));
    z = x * 2.0f + y;
    std::vector<float> hx = x.to_host(), hy = y.to_host(), hz = z.to_host();
    for (int64_t i = 0; i < shape_of(out).size(); ++i) {
      float want = hx[source_index(out, xs, i)] * 2.0f + hy[source_index(out, ys, i)];
      ASSERT_EQ(hz[i], want) << "trial " << trial << " element " << i;
    }
  }
}

TEST(Broadcast, RowAndColumn) {
  auto x = Array<double>::arange({3, 4});
  auto row = Array<double>::from_host({10, 20, 30, 40});
  auto col = Array<double>::from_host({1, 2, 3}, {3, 1});
  auto r = gpukit::eval(x + row);
  auto c = gpukit::eval(x * col);
  EXPECT_EQ(r.shape(), Shape({3, 4}));
  std::vector<double> hr = r.to_host(), hc = c.to_host();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(hr[i * 4 + j], i * 4 + j + 10.0 * (j + 1));
      EXPECT_EQ(hc[i * 4 + j], (i * 4 + j) * (i + 1.0));
    }
  // The outer product shape from a column and a row.
  auto o = gpukit::eval(col * row);
  EXPECT_EQ(o.shape(), Shape({3, 4}));
  EXPECT_EQ(o.to_host()[5], 2.0 * 20);
}

TEST(Broadcast, AssignmentBroadcastsToTheDestination) {
  Array<int32_t> out(Shape{2, 3});
  auto row = Array<int32_t>::from_host({1, 2, 3});
  out = row; // (a temporary on the right would be moved into out, not broadcast)
  EXPECT_EQ(out.to_host(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
}

TEST(Broadcast, NewStridesOfOneClassDoNotRecompile) {
  auto x = Array<float>::arange({8, 10});
  Array<float> out(Shape{4, 4});
  auto sliced = [&](gpukit::Slice rows) { out = x.slice({rows, gpukit::Slice(0, 8, 2)}) + 1.0f; };
  sliced(gpukit::Slice(0, 8, 2)); // strides (20, 2)
  uint64_t builds = gpukit::expression_stats().ir_builds;
  sliced(gpukit::Slice(1, 5)); // strides (10, 2): the same class, new arguments
  EXPECT_EQ(gpukit::expression_stats().ir_builds, builds);
  EXPECT_EQ(out.to_host()[0], 10.0f + 1.0f);
  EXPECT_EQ(out.to_host()[5], 20.0f + 2.0f + 1.0f);
}

TEST(Broadcast, EmptyArraysLaunchNothing) {
  Array<float> x(Shape{0, 4}), b(4), out(Shape{0, 4});
  uint64_t runs = gpukit::expression_stats().cpu_runs + gpukit::expression_stats().gpu_launches;
  out = x + b;
  EXPECT_EQ(gpukit::expression_stats().cpu_runs + gpukit::expression_stats().gpu_launches, runs);
}

// --- 0-d operands (Shape::scalar()) --------------------------------------------

TEST(Broadcast, ZeroDShapesBroadcastWithAnything) {
  using gpukit::detail::broadcast_shapes;
  using gpukit::detail::broadcasts_to;
  const Shape s = Shape::scalar();
  EXPECT_EQ(broadcast_shapes(s, s), s);
  EXPECT_EQ(broadcast_shapes(s, Shape(5)), Shape(5));
  EXPECT_EQ(broadcast_shapes(Shape({2, 1, 3, 4}), s), Shape({2, 1, 3, 4}));
  EXPECT_EQ(broadcast_shapes(s, Shape(0)), Shape(0));
  EXPECT_EQ(broadcast_shapes(s, Shape(1)), Shape(1)); // [1] keeps its axis
  EXPECT_TRUE(broadcasts_to(s, Shape({3, 4})));
  EXPECT_TRUE(broadcasts_to(s, s));
  EXPECT_FALSE(broadcasts_to(Shape(1), s));
  EXPECT_FALSE(broadcasts_to(Shape({1, 1}), s));
}

TEST(Broadcast, ZeroDOperandIsElementwise) {
  auto x = Array<float>::arange({3, 4});
  auto s = Array<float>::full(Shape::scalar(), 10.0f);
  auto a = gpukit::eval(x + s);
  auto b = gpukit::eval(s * x - s);
  EXPECT_EQ(a.shape(), Shape({3, 4}));
  EXPECT_EQ(b.shape(), Shape({3, 4}));
  std::vector<float> ha = a.to_host(), hb = b.to_host();
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(ha[i], i + 10.0f);
    EXPECT_EQ(hb[i], 10.0f * i - 10.0f);
  }
  // Into an existing array, updates, and a 0-d right-hand side alone.
  Array<float> out(Shape{2, 6});
  out = s;
  EXPECT_EQ(out.to_host(), std::vector<float>(12, 10.0f));
  out = x.reshape({2, 6}) / s;
  EXPECT_FLOAT_EQ(out.to_host()[7], 0.7f);
  out -= s;
  EXPECT_EQ(out.to_host()[0], -10.0f);
  // Other element types mix as with any operand.
  auto n = Array<int32_t>::full(Shape::scalar(), 3);
  auto v = Array<int32_t>::arange({5});
  EXPECT_EQ(gpukit::eval(v * n).to_host(), (std::vector<int32_t>{0, 3, 6, 9, 12}));
  auto d = gpukit::eval(v * Array<double>::full(Shape::scalar(), 0.5));
  EXPECT_EQ(d.to_host(), (std::vector<double>{0, 0.5, 1, 1.5, 2}));
  // Only 0-d operands make a 0-d result.
  auto t = gpukit::eval(s * s + 1.0f);
  EXPECT_EQ(t.shape(), Shape::scalar());
  EXPECT_EQ(t.item_sync(), 101.0f);
}

TEST(Broadcast, ZeroDOperandsAgainstHost) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    unsigned rank = rng() % 5; // 0-d outputs too
    std::vector<int64_t> out(rank);
    for (auto& e : out)
      e = std::vector<int64_t>{1, 2, 3, 5, 17}[rng() % 5];
    // One operand 0-d, the other any suffix of out (0-d included).
    unsigned r = rng() % (rank + 1);
    std::vector<int64_t> xs(out.end() - r, out.end()), ys;
    if (trial % 2)
      std::swap(xs, ys);
    auto x = Array<float>::random(shape_of(xs), 300 + trial, -1, 1);
    auto y = Array<float>::random(shape_of(ys), 400 + trial, -1, 1);
    Array<float> z(shape_of(out));
    z = x * 2.0f + y;
    std::vector<float> hx = x.to_host(), hy = y.to_host(), hz = z.to_host();
    ASSERT_EQ(hz.size(), static_cast<size_t>(shape_of(out).size()));
    for (int64_t i = 0; i < shape_of(out).size(); ++i) {
      float want = hx[source_index(out, xs, i)] * 2.0f + hy[source_index(out, ys, i)];
      ASSERT_EQ(hz[i], want) << "trial " << trial << " element " << i;
    }
  }
}

TEST(Broadcast, ZeroDOperandIterationSpace) {
  auto x = Array<float>::arange({3, 4});
  auto s = Array<float>::full(Shape::scalar(), 1.0f);
  Array<float> out(Shape{3, 4});
  gpukit::detail::ArrayBase* outputs[] = {&out};
  // A 0-d operand on a dense [3, 4]: one merged axis, stride 0 (Broadcast).
  const gpukit::detail::ArrayBase* leaves[] = {&x, &s};
  gpukit::detail::IterationSpace space;
  gpukit::detail::plan_iteration(outputs, leaves, space);
  EXPECT_FALSE(space.flat);
  ASSERT_EQ(space.rank, 1u);
  EXPECT_EQ(space.extents[0], 12);
  EXPECT_EQ(space.strides[0][0], 1); // out
  EXPECT_EQ(space.strides[1][0], 1); // x
  EXPECT_EQ(space.strides[2][0], 0); // s
  // Every operand 0-d: the flat kernel over one element.
  Array<float> t(Shape::scalar());
  gpukit::detail::ArrayBase* zero_out[] = {&t};
  const gpukit::detail::ArrayBase* zero_leaves[] = {&s};
  gpukit::detail::plan_iteration(zero_out, zero_leaves, space);
  EXPECT_TRUE(space.flat);
  EXPECT_EQ(space.rank, 1u);
  EXPECT_EQ(space.extents[0], 1);
}

TEST(Broadcast, ZeroDOperandKernelCompiles) {
  auto x = Array<float>::arange({5, 7}).named("x");
  auto s = Array<float>::full(Shape::scalar(), 2.0f).named("s");
  Array<float> out(Shape{5, 7});
  out.named("out");
  gpukit::KernelInfo strided = gpukit::inspect(out, x * s);
  EXPECT_NE(strided.source.find("strided"), std::string::npos) << strided.source;
  // Broadcast on every axis: one element, no index arithmetic.
  EXPECT_NE(strided.source.find("s[0]"), std::string::npos) << strided.source;
  Array<float> t(Shape::scalar());
  t.named("t");
  gpukit::KernelInfo flat = gpukit::inspect(t, s * s);
  EXPECT_EQ(flat.source.find("strided"), std::string::npos) << flat.source;
  const gpukit::rt::NvrtcApi* api = gpukit::rt::NvrtcApi::load();
  if (!api)
    GTEST_SKIP() << "NVRTC unavailable: " << gpukit::rt::NvrtcApi::load_error();
  gpukit::rt::NvrtcCompiler compiler(*api);
  std::vector<std::string> options{"--fmad=false",
                                   std::string("--include-path=") + GPUKIT_SOURCE_DIR};
  for (const gpukit::KernelInfo* k : {&strided, &flat}) {
    try {
      EXPECT_FALSE(compiler.compile(k->name, k->source, "sm_90", options).cubin.empty());
    } catch (const gpukit::Error& e) {
      ADD_FAILURE() << e.what() << "\n" << k->source;
    }
  }
}

// --- 0-d operands on the GPU, against a float64 reference ----------------------

/// Each expected value is at most two float operations, each rounded once
/// (relative error <= 2^-23 with the operands kept the same sign); 1e-6
/// leaves room without hiding a wrong element.
constexpr gpukit::testing::Tolerance kTwoFloatOps{1e-6, 1e-30};

class GpuZeroD : public ::testing::Test {
protected:
  void SetUp() override {
    gpukit::rt::Runtime& runtime = gpukit::rt::Runtime::get();
    if (!runtime.on_gpu())
      GTEST_SKIP() << "no GPU: " << runtime.fallback_reason();
    Seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::printf("GpuZeroD seed %llu\n", static_cast<unsigned long long>(Seed));
  }
  uint64_t next_seed() { return Seed++; }

  static Array<float> poisoned(const Shape& shape) {
    return Array<float>::full(shape, std::numeric_limits<float>::quiet_NaN());
  }
  /// Every element of `actual` close to `expected(i)`; NaN fails.
  template <typename F>
  static void expect_elements(const std::vector<float>& actual, size_t n, F expected) {
    ASSERT_EQ(actual.size(), n);
    int failures = 0;
    for (size_t i = 0; i < n && failures < 10; ++i) {
      double e = expected(i);
      if (std::isnan(actual[i]) || !gpukit::testing::close_enough(actual[i], e, kTwoFloatOps)) {
        ADD_FAILURE() << "element " << i << ": got " << actual[i] << ", expected " << e;
        ++failures;
      }
    }
  }

  uint64_t Seed = 0;
};

TEST_F(GpuZeroD, OperandBroadcastOverAMatrix) {
  // Not multiples of a block or a pack; the grid-stride loop wraps.
  constexpr int64_t rows = 1031, cols = 777;
  auto x = Array<float>::random({rows, cols}, next_seed(), -2.0, 2.0).named("x");
  // s in [0.5, 2): x * s and x have one sign, so x * s + x does not cancel.
  auto s = Array<float>::random(Shape::scalar(), next_seed(), 0.5, 2.0).named("s");
  Array<float> out = poisoned({rows, cols});
  out = x * s + x;
  std::vector<float> hx = x.to_host();
  double hs = s.item_sync();
  expect_elements(out.to_host(), static_cast<size_t>(rows * cols),
                  [&](size_t i) { return double(hx[i]) * hs + double(hx[i]); });
}

TEST_F(GpuZeroD, OperandBroadcastOverALongVector) {
  constexpr int64_t n = (int64_t(1) << 22) + 3;
  auto x = Array<float>::random({n}, next_seed(), -2.0, 2.0).named("x");
  auto s = Array<float>::random(Shape::scalar(), next_seed(), 0.5, 2.0).named("s");
  Array<float> out = poisoned({n});
  out = s * x;
  std::vector<float> hx = x.to_host();
  double hs = s.item_sync();
  expect_elements(out.to_host(), static_cast<size_t>(n),
                  [&](size_t i) { return double(hx[i]) * hs; });
}

TEST_F(GpuZeroD, ZeroDViewOfAnotherArrayAsOperand) {
  // An unaligned element (offset 5) of a vector, viewed 0-d with select().
  constexpr int64_t n = 100003;
  auto v = Array<float>::random({16}, next_seed(), 0.5, 2.0).named("v");
  auto x = Array<float>::random({n}, next_seed(), -2.0, 2.0).named("x");
  Array<float> out = poisoned({n});
  out = x * v.select(0, 5) + x;
  std::vector<float> hx = x.to_host();
  double hs = v.to_host()[5];
  expect_elements(out.to_host(), static_cast<size_t>(n),
                  [&](size_t i) { return double(hx[i]) * hs + double(hx[i]); });
}

TEST_F(GpuZeroD, ZeroDOutput) {
  auto a = Array<float>::random(Shape::scalar(), next_seed(), 0.5, 2.0).named("a");
  auto b = Array<float>::random(Shape::scalar(), next_seed(), 0.5, 2.0).named("b");
  Array<float> t = poisoned(Shape::scalar());
  t = a * b + a;
  double ha = a.item_sync(), hb = b.item_sync();
  expect_elements(t.to_host(), 1, [&](size_t) { return ha * hb + ha; });
  // In place: the output is its own operand.
  double before = t.item_sync();
  t = t * 2.0f;
  expect_elements(t.to_host(), 1, [&](size_t) { return 2.0 * before; });
  auto u = gpukit::eval(a / b);
  EXPECT_EQ(u.shape(), Shape::scalar());
  expect_elements(u.to_host(), 1, [&](size_t) { return ha / hb; });
}

} // namespace
