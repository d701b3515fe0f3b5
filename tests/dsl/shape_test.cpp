// Shape, and 0-d arrays: Shape::scalar() (rank 0, one element, "[]"), arrays
// of that shape made every way, read back with item_sync(), and assigned
// into elementwise. Runs on whichever backend the runtime picked (the CPU
// fallback here; broadcast_test.cpp has the GPU checks of 0-d operands).
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using gpukit::Array;
using gpukit::Error;
using gpukit::ErrorKind;
using gpukit::Shape;

/// The message of the Error{kind} that `f` throws ("" when none).
template <typename F> std::string error_of(F&& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no gpukit::Error";
  return "";
}

TEST(Shape, ScalarHasRankZeroAndOneElement) {
  Shape s = Shape::scalar();
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.to_string(), "[]");
  EXPECT_TRUE(s.extents().empty());
  EXPECT_EQ(s, Shape::of(std::vector<int64_t>{}));
  EXPECT_EQ(s, Shape::of({}));
}

TEST(Shape, ScalarDiffersFromOneAndFromEmpty) {
  EXPECT_NE(Shape::scalar(), Shape(1));
  EXPECT_NE(Shape::scalar(), Shape({1, 1}));
  // The default constructor (and so `Shape{}`) stays the empty 1-D shape.
  Shape empty;
  EXPECT_EQ(empty.rank(), 1u);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.to_string(), "[0]");
  EXPECT_EQ(Shape{}, empty);
  EXPECT_NE(Shape::scalar(), empty);
}

TEST(Shape, RanksOneToFour) {
  EXPECT_EQ(Shape({2, 3, 4, 5}).size(), 120);
  EXPECT_EQ(Shape({2, 3, 4, 5}).to_string(), "[2, 3, 4, 5]");
  EXPECT_EQ(Shape::of(std::vector<int64_t>{7, 0}).size(), 0);
  EXPECT_EQ(Shape(9).rank(), 1u);
}

TEST(Shape, EmptyBracesAreNotTheScalarShape) {
  std::string m = error_of([] { Shape s({}); }, ErrorKind::Shape);
  EXPECT_NE(m.find("Shape::scalar()"), std::string::npos) << m;
  m = error_of([] { Shape::of(std::vector<int64_t>{1, 2, 3, 4, 5}); }, ErrorKind::Shape);
  EXPECT_NE(m.find("0 to 4 dimensions, given 5"), std::string::npos) << m;
}

TEST(ZeroD, ConstructionAllocatesOneElement) {
  Array<float> s(Shape::scalar());
  EXPECT_EQ(s.shape(), Shape::scalar());
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.bytes(), sizeof(float));
  EXPECT_TRUE(s.is_contiguous());
  EXPECT_NE(s.address(), 0u);
  Array<double> d(Shape::scalar());
  EXPECT_EQ(d.bytes(), sizeof(double));
}

TEST(ZeroD, MadeEveryWayAndReadWithItemSync) {
  EXPECT_EQ(Array<float>::from_host({2.5f}, Shape::scalar()).item_sync(), 2.5f);
  EXPECT_EQ(Array<int32_t>::full(Shape::scalar(), -7).item_sync(), -7);
  EXPECT_EQ(Array<double>::arange(Shape::scalar(), 3.0).item_sync(), 3.0);
  EXPECT_TRUE(Array<bool>::full(Shape::scalar(), true).item_sync());
  // random() draws its first value, as for [1].
  EXPECT_EQ(Array<float>::random(Shape::scalar(), 11, -1, 1).item_sync(),
            Array<float>::random({1}, 11, -1, 1).item_sync());
  auto s = Array<int64_t>::full(Shape::scalar(), 42);
  EXPECT_EQ(s.to_host(), std::vector<int64_t>{42});
  int64_t one = 0;
  s.to_host(std::span<int64_t>(&one, 1));
  EXPECT_EQ(one, 42);
  // item_sync() reads any one-element array.
  EXPECT_EQ(Array<float>::full({1, 1}, 4.0f).item_sync(), 4.0f);
}

TEST(ZeroD, WrongCountsNameTheShape) {
  EXPECT_EQ(error_of([] { Array<float>::from_host({1.0f, 2.0f}, Shape::scalar()); },
                     ErrorKind::Shape),
            "from_host: 2 values for an array of shape [] (1 elements)");
  EXPECT_EQ(error_of([] { Array<float>(3).item_sync(); }, ErrorKind::Shape),
            "item_sync: 1 values for an array of shape [3] (3 elements)");
}

TEST(ZeroD, ElementwiseAssignmentIntoAZeroDArray) {
  auto s = Array<float>::full(Shape::scalar(), 3.0f);
  s = s * 2.0f;
  EXPECT_EQ(s.item_sync(), 6.0f);
  s += 1.5f;
  EXPECT_EQ(s.item_sync(), 7.5f);
  s = 0.25f;
  EXPECT_EQ(s.item_sync(), 0.25f);
  auto t = Array<float>::full(Shape::scalar(), 2.0f);
  s = s + sqrt(t * 8.0f);
  EXPECT_EQ(s.item_sync(), 4.25f);
  // An expression of 0-d operands is 0-d.
  auto u = gpukit::eval(s * t);
  EXPECT_EQ(u.shape(), Shape::scalar());
  EXPECT_EQ(u.item_sync(), 8.5f);
  // Integers, and a comparison into bool.
  auto i = Array<int32_t>::full(Shape::scalar(), 5);
  i = i * i - 3;
  EXPECT_EQ(i.item_sync(), 22);
  auto b = gpukit::eval(i > 20);
  EXPECT_EQ(b.shape(), Shape::scalar());
  EXPECT_TRUE(b.item_sync());
}

TEST(ZeroD, CopyShareAndMove) {
  auto s = Array<double>::full(Shape::scalar(), 1.25).named("s");
  Array<double> c = s.copy();
  EXPECT_EQ(c.shape(), Shape::scalar());
  EXPECT_EQ(c.name(), "s");
  EXPECT_FALSE(c.shares_buffer_with(s));
  Array<double> alias = s.share();
  alias = alias + 1.0;
  EXPECT_EQ(s.item_sync(), 2.25);
  EXPECT_EQ(c.item_sync(), 1.25);
  // A moved-from array is the empty [0], not 0-d.
  Array<double> moved = std::move(c);
  EXPECT_EQ(c.shape(), Shape());
  EXPECT_EQ(moved.shape(), Shape::scalar());
}

TEST(ZeroD, ShapeMismatchNamesTheZeroDShape) {
  Array<float> s(Shape::scalar());
  s.named("s");
  auto x = Array<float>::full({3}, 1.0f).named("x");
  // A [3] operand does not fit a 0-d destination (NumPy rules).
  std::string m = error_of([&] { s = x + 1.0f; }, ErrorKind::Shape);
  EXPECT_NE(m.find("s is [] but operand x is [3]"), std::string::npos) << m;
}

} // namespace
