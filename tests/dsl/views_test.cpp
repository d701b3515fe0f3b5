// Views: slicing, transpose/permute, select, reshape, expand_dims and
// broadcast_to, read in expressions and assigned into, against host indexing.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

namespace {

using gpukit::Array;
using gpukit::Shape;
using gpukit::Slice;

TEST(Views, SliceReadsTheRightElements) {
  auto m = Array<int32_t>::arange({5, 7});
  auto v = m.slice({Slice(1, 4), Slice(0, 7, 3)}); // rows 1..3, cols 0, 3, 6
  EXPECT_EQ(v.shape(), Shape({3, 3}));
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(v.to_host(), (std::vector<int32_t>{7, 10, 13, 14, 17, 20, 21, 24, 27}));
  auto r = m.slice(1, Slice::reversed()).slice({Slice(0, 1)});
  EXPECT_EQ(r.to_host(), (std::vector<int32_t>{6, 5, 4, 3, 2, 1, 0}));
  auto neg = m.slice({Slice(-2, 100)});
  EXPECT_EQ(neg.shape(), Shape({2, 7}));
  EXPECT_EQ(neg.to_host()[0], 21);
  auto empty = m.slice({Slice(3, 3)});
  EXPECT_EQ(empty.size(), 0);
  EXPECT_TRUE(empty.to_host().empty());
}

TEST(Views, TransposeAndPermute) {
  auto m = Array<float>::arange({3, 5});
  Array<float> t(Shape{5, 3});
  t = m.transpose() * 1.0f;
  std::vector<float> h = t.to_host();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(h[i * 3 + j], j * 5 + i);
  auto c = Array<double>::arange({2, 3, 4});
  auto p = c.permute({2, 0, 1}).copy();
  EXPECT_EQ(p.shape(), Shape({4, 2, 3}));
  std::vector<double> hp = p.to_host();
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int d = 0; d < 3; ++d)
        EXPECT_EQ(hp[(a * 2 + b) * 3 + d], b * 12 + d * 4 + a);
}

TEST(Views, OddSizesDefeatVectorization) {
  // An offset of one element breaks 16-byte alignment: the scalar loop.
  auto x = Array<float>::arange({1001});
  auto v = x.slice({Slice(1, 1000)});
  EXPECT_TRUE(v.is_contiguous());
  auto y = gpukit::eval(v + v);
  std::vector<float> h = y.to_host();
  ASSERT_EQ(h.size(), 999u);
  for (size_t i = 0; i < h.size(); ++i)
    EXPECT_EQ(h[i], 2.0f * (i + 1));
}

TEST(Views, AssignIntoAViewWritesOnlyItsElements) {
  auto m = Array<int32_t>::full({4, 4}, 0);
  m.slice({Slice(1, 3), Slice(0, 4, 2)}) = 7;
  m.transpose().slice({Slice(3, 4)}) += 1; // column 3
  EXPECT_EQ(m.to_host(), (std::vector<int32_t>{0, 0, 0, 1, 7, 0, 7, 1, 7, 0, 7, 1, 0, 0, 0, 1}));
  // In place through one view.
  auto row = m.select(0, 1);
  row = row * 2;
  EXPECT_EQ(m.to_host()[4], 14);
}

TEST(Views, ReshapeExpandDimsBroadcastTo) {
  auto x = Array<float>::arange({2, 6});
  auto r = x.reshape({3, 4});
  EXPECT_EQ(r.to_host()[5], 5.0f);
  EXPECT_TRUE(r.shares_buffer_with(x));
  auto b = Array<float>::from_host({1, 2});
  auto col = b.expand_dims(1); // [2, 1]
  EXPECT_EQ(col.shape(), Shape({2, 1}));
  auto y = gpukit::eval(x + col);
  EXPECT_EQ(y.to_host()[6], 6.0f + 2.0f);
  auto bb = gpukit::broadcast_to(b.expand_dims(1), {2, 3});
  EXPECT_EQ(bb.to_host(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

TEST(Views, ViewsOfOneBufferAreSeparateInputs) {
  auto m = Array<float>::arange({3, 3});
  auto s = gpukit::eval(m + m.transpose());
  std::vector<float> h = s.to_host();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(h[i * 3 + j], float(i * 3 + j + j * 3 + i));
}

TEST(Views, StridedSourceIsGenerated) {
  auto x = Array<float>::arange({4, 6}).named("x");
  auto b = Array<float>::arange({6}).named("b");
  Array<float> out(Shape{4, 6});
  out.named("out");
  std::string src = gpukit::source_of(out, x + b);
  EXPECT_NE(src.find("b[gk_i1]"), std::string::npos) << src;
  EXPECT_NE(src.find("(strided r2"), std::string::npos) << src;
  EXPECT_EQ(src.find(" / "), std::string::npos) << "no division in the loop:\n" << src;
}

} // namespace
