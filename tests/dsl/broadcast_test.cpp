// Broadcasting against a straightforward host implementation: random shapes
// with size-1 axes, empty arrays and odd sizes, on the CPU fallback (and on
// the GPU when there is one: the same code path picks the backend).
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

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

} // namespace
