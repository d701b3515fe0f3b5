// Reductions inside expressions evaluated once per result (norms, ratios of
// reductions) and compound updates `out += sum(...)`, on the CPU fallback or
// the GPU, against float64 references computed here. Outputs are poisoned
// with NaN first, so an element left unwritten fails.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpukit {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kTol = 1e-5; // relative, float32 accumulation of <= 10^4 terms

std::vector<double> host(const Array<float>& a) {
  std::vector<float> v = a.to_host();
  return {v.begin(), v.end()};
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], kTol * (1 + std::abs(want[i]))) << "at " << i;
}

struct Matrix {
  int64_t rows, cols;
  Array<float> x;
  std::vector<double> h;
  Matrix(int64_t r, int64_t c, uint64_t seed) : rows(r), cols(c), x(Array<float>::random({r, c}, seed, -2, 2)) {
    x.named("x");
    h = host(x);
  }
  double at(int64_t r, int64_t c) const { return h[r * cols + c]; }
};

TEST(ReduceEpilogue, RowNormOncePerRow) {
  Matrix m(61, 333, 11);
  auto out = Array<float>::full({m.rows}, kNaN);
  out = sqrt(sum(m.x * m.x, 1));
  std::vector<double> want(m.rows);
  for (int64_t r = 0; r < m.rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < m.cols; ++c)
      s += m.at(r, c) * m.at(r, c);
    want[r] = std::sqrt(s);
  }
  expect_close(host(out), want);
}

TEST(ReduceEpilogue, EvalOfANormHasTheResultShape) {
  Matrix m(8, 20, 12);
  auto norms = eval(sqrt(sum(m.x * m.x, 1)));
  EXPECT_EQ(norms.shape(), Shape({8}));
  auto centred = eval(m.x - mean(m.x, 1));
  EXPECT_EQ(centred.shape(), Shape({8, 20}));
}

TEST(ReduceEpilogue, FullNormAndScaledSum) {
  Matrix m(100, 129, 13);
  auto n = Array<float>::full({1}, kNaN);
  n = sqrt(sum(m.x * m.x)) * 0.5f;
  double s = 0;
  for (double v : m.h)
    s += v * v;
  expect_close(host(n), {std::sqrt(s) * 0.5});
}

TEST(ReduceEpilogue, ColumnRangeReadsTwoStages) {
  // Two stages; the epilogue runs in the second stage's combine and reads
  // the first stage's value from its workspace.
  Matrix m(300, 72, 14);
  auto out = Array<float>::full({m.cols}, kNaN);
  out = amax(m.x, 0) - amin(m.x, 0);
  std::vector<double> want(m.cols);
  for (int64_t c = 0; c < m.cols; ++c) {
    double hi = -1e30, lo = 1e30;
    for (int64_t r = 0; r < m.rows; ++r) {
      hi = std::max(hi, m.at(r, c));
      lo = std::min(lo, m.at(r, c));
    }
    want[c] = hi - lo;
  }
  expect_close(host(out), want);
}

TEST(ReduceEpilogue, PlusEqualsRowColumnAndFullSums) {
  Matrix m(45, 97, 15);
  auto rows = Array<float>::random({m.rows}, 16, -1, 1);
  auto cols = Array<float>::random({m.cols}, 17, -1, 1);
  auto total = Array<float>::random({1}, 18, -1, 1);
  std::vector<double> want_rows = host(rows), want_cols = host(cols), want_total = host(total);
  rows += sum(m.x, 1);
  cols -= sum(m.x, 0);
  total *= sum(m.x);
  double all = 0;
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) {
      want_rows[r] += m.at(r, c);
      want_cols[c] -= m.at(r, c);
      all += m.at(r, c);
    }
  want_total[0] *= all;
  expect_close(host(rows), want_rows);
  expect_close(host(cols), want_cols);
  ASSERT_NEAR(host(total)[0], want_total[0], 1e-4 * (1 + std::abs(want_total[0])));
}

TEST(ReduceEpilogue, PlusEqualsBroadcastBack) {
  // `out += x - mean(x, 1)`: the epilogue over every element reads out.
  Matrix m(9, 64, 19);
  auto out = Array<float>::random({m.rows, m.cols}, 20, -1, 1);
  std::vector<double> want = host(out);
  out += m.x - mean(m.x, 1);
  for (int64_t r = 0; r < m.rows; ++r) {
    double mu = 0;
    for (int64_t c = 0; c < m.cols; ++c)
      mu += m.at(r, c);
    mu /= m.cols;
    for (int64_t c = 0; c < m.cols; ++c)
      want[r * m.cols + c] += m.at(r, c) - mu;
  }
  expect_close(host(out), want);
}

TEST(ReduceEpilogue, OperandOfTheWrongShapeNamesBothShapes) {
  Matrix m(6, 10, 21);
  auto wrong = Array<float>::full({7}, 0.0f);
  Array<float> out(Shape({6}));
  try {
    out = sum(m.x, 1) + wrong;
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Shape);
    EXPECT_NE(std::string(e.what()).find("[7]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[6]"), std::string::npos) << e.what();
  }
}

TEST(ReduceEpilogue, OutputOfTheWrongSizeNamesTheExpectedShapes) {
  Matrix m(6, 10, 22);
  Array<float> out(Shape({5}));
  try {
    out = sqrt(sum(m.x * m.x, 1));
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Shape);
    EXPECT_NE(std::string(e.what()).find("[6]"), std::string::npos) << e.what();
  }
}

TEST(ReduceEpilogue, EmptyRowsGiveTheIdentity) {
  auto x = Array<float>::full({3, 0}, 1.0f);
  auto sums = Array<float>::full({3}, kNaN);
  sums = sum(x, 1);
  expect_close(host(sums), {0, 0, 0});
  auto maxima = eval(amax(x, 1));
  EXPECT_EQ(maxima.to_host()[0], -std::numeric_limits<float>::infinity());
  Array<float> centred(Shape({3, 0}));
  centred = x - mean(x, 1); // nothing to write
  Array<int64_t> idx(Shape({3}));
  try {
    idx = argmax(x, 1);
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
  }
}

TEST(ReduceEpilogue, OperandsNamedLikeStageValuesAreRenamed) {
  // r0, r1, ... name stage values inside reduction kernels; gk_... their own
  // identifiers: operands so named get a prefix, never a loop over suffixes.
  auto r0 = Array<float>::full({4, 8}, 1.0f).named("r0");
  auto gk = Array<float>::full({4, 8}, 2.0f).named("gk_dst");
  Array<float> out(Shape({4}));
  KernelInfo info = inspect(out, sum(r0 * gk, 1));
  EXPECT_NE(info.source.find("in_r0"), std::string::npos) << info.source;
  EXPECT_NE(info.source.find("in_gk_dst"), std::string::npos) << info.source;
  out = sum(r0 * gk, 1);
  expect_close(host(out), {16, 16, 16, 16});
  Array<float> twice(Shape({4, 8}));
  twice = r0 + r0;
  EXPECT_EQ(twice.to_host()[0], 2.0f);
}

} // namespace
} // namespace gpukit
