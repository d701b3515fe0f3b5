// Views: slicing, transpose/permute, select, reshape, expand_dims and
// broadcast_to, read in expressions and assigned into, against host indexing.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// --- 0-d arrays (Shape::scalar()) ----------------------------------------------

/// The message of the Error{Shape} that `f` throws ("" when none).
template <typename F> std::string shape_error_of(F&& f) {
  try {
    f();
  } catch (const gpukit::Error& e) {
    EXPECT_EQ(e.kind(), gpukit::ErrorKind::Shape) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no gpukit::Error";
  return "";
}

TEST(Views, ReshapeToAndFromZeroD) {
  auto one = Array<float>::from_host({5.0f});
  auto s = one.reshape(Shape::scalar());
  EXPECT_EQ(s.shape(), Shape::scalar());
  EXPECT_TRUE(s.shares_buffer_with(one));
  EXPECT_EQ(s.item_sync(), 5.0f);
  auto m = s.reshape({1, 1});
  EXPECT_EQ(m.shape(), Shape({1, 1}));
  EXPECT_EQ(m.reshape(Shape::scalar()).shape(), Shape::scalar());
  EXPECT_EQ(s.reshape({1}).to_host(), std::vector<float>{5.0f});
  // Writes through the 0-d view reach the 1-D array.
  s = s + 1.0f;
  EXPECT_EQ(one.to_host(), std::vector<float>{6.0f});
  // A one-element slice (offset 2, not contiguous as a whole array) as 0-d.
  auto x = Array<float>::arange({4});
  EXPECT_EQ(x.slice({Slice(2, 3)}).reshape(Shape::scalar()).item_sync(), 2.0f);
  EXPECT_EQ(shape_error_of([&] { x.reshape(Shape::scalar()); }),
            "reshape: cannot reshape an array of shape [4] (4 elements) to [] (1 elements)");
  EXPECT_EQ(shape_error_of([&] { s.reshape({2}); }),
            "reshape: cannot reshape an array of shape [] (1 elements) to [2] (2 elements)");
}

TEST(Views, SelectOfOneDGivesZeroD) {
  auto x = Array<int32_t>::arange({5});
  auto e = x.select(0, 3);
  EXPECT_EQ(e.shape(), Shape::scalar());
  EXPECT_EQ(e.item_sync(), 3);
  EXPECT_EQ(x.select(0, -1).item_sync(), 4);
  // Assigning into it writes that one element only.
  x.select(0, 1) = 40;
  EXPECT_EQ(x.to_host(), (std::vector<int32_t>{0, 40, 2, 3, 4}));
  // A 0-d view as an operand broadcasts: m - m[0, 0].
  auto m = Array<float>::arange({2, 3}, 1.0);
  auto corner = m.select(0, 0).select(0, 0);
  EXPECT_EQ(corner.shape(), Shape::scalar());
  EXPECT_EQ(gpukit::eval(m - corner).to_host(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(Views, ExpandDimsOfZeroD) {
  auto s = Array<float>::full(Shape::scalar(), 2.0f);
  EXPECT_EQ(s.expand_dims(0).shape(), Shape(1));
  EXPECT_EQ(s.expand_dims(-1).shape(), Shape(1));
  EXPECT_EQ(s.expand_dims(0).expand_dims(1).shape(), Shape({1, 1}));
  EXPECT_EQ(s.expand_dims(0).to_host(), std::vector<float>{2.0f});
  EXPECT_EQ(shape_error_of([&] { s.expand_dims(1); }),
            "expand_dims: axis 1 is out of range for an array of shape [] (axes 0..0)");
}

TEST(Views, BroadcastToFromZeroD) {
  auto s = Array<float>::full(Shape::scalar(), 1.5f).named("s");
  auto b = s.broadcast_to({2, 3});
  EXPECT_EQ(b.shape(), Shape({2, 3}));
  for (unsigned a = 0; a < 2; ++a)
    EXPECT_EQ(b.strides()[a], 0);
  EXPECT_EQ(b.to_host(), std::vector<float>(6, 1.5f));
  EXPECT_EQ(gpukit::broadcast_to(s, {4, 1, 2, 3}).copy().size(), 24);
  EXPECT_EQ(s.broadcast_to(Shape::scalar()).item_sync(), 1.5f);
  auto sum = gpukit::eval(b + Array<float>::arange({2, 3}));
  EXPECT_EQ(sum.to_host(), (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
  // NumPy rules: [1] does not broadcast to [] (it has an axis [] lacks).
  auto one = Array<float>::from_host({1.0f}).named("one");
  EXPECT_EQ(shape_error_of([&] { one.broadcast_to(Shape::scalar()); }),
            "broadcast_to: cannot broadcast one [1] to []: trailing axes must be equal or 1 "
            "(NumPy rules)");
}

TEST(Views, AxisViewsOfZeroDNameTheShape) {
  auto s = Array<float>::full(Shape::scalar(), 1.0f).named("s");
  EXPECT_EQ(shape_error_of([&] { s.transpose(); }),
            "transpose: s [] is 0-d and has no axes to reverse; use the array itself");
  EXPECT_EQ(shape_error_of([&] { s.slice({Slice(0, 1)}); }),
            "slice: s [] is 0-d and has no axes to slice; read its element with item_sync(), or "
            "view it as [1] with reshape({1})");
  EXPECT_EQ(shape_error_of([&] { s.slice(0, Slice(0, 1)); }),
            "slice: s [] is 0-d and has no axis 0");
  EXPECT_EQ(shape_error_of([&] { s.select(-1, 0); }), "select: s [] is 0-d and has no axis -1");
  EXPECT_EQ(shape_error_of([&] { s.permute({0}); }),
            "permute: [0] is not a permutation of the 0 axes of s []");
  // No slices and the empty permutation leave it as it is.
  EXPECT_EQ(s.slice({}).shape(), Shape::scalar());
  EXPECT_EQ(s.permute({}).shape(), Shape::scalar());
}

} // namespace
