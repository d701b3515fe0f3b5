// The messages of views and broadcasting, pinned.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace {

using gpukit::Array;
using gpukit::Error;
using gpukit::ErrorKind;
using gpukit::Shape;
using gpukit::Slice;

void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
    return;
  }
  ADD_FAILURE() << "no gpukit::Error; expected: " << message;
}

std::string here(int line) { return "error/view_errors_test.cpp:" + std::to_string(line); }

TEST(ViewErrors, IncompatibleBroadcastNamesBothShapes) {
  auto x = Array<float>::full({3, 4}, 1.0f).named("x");
  auto y = Array<float>::full({5}, 1.0f).named("y");
  expect_error([&] { auto z = gpukit::eval(x + y); }, ErrorKind::Shape,
               "cannot broadcast x [3, 4] with y [5] in `x + y` (NumPy rules: aligned at the last "
               "axis, extents must be equal or 1)");
}

TEST(ViewErrors, OperandThatDoesNotBroadcastToTheOutput) {
  auto x = Array<float>::full({3, 4}, 1.0f).named("x");
  Array<float> out(4);
  out.named("out");
  int line = __LINE__ + 1;
  expect_error([&] { out = x + 1.0f; }, ErrorKind::Shape,
               "shape mismatch in `out = x + 1` at " + here(line) + ": out is [4] but operand x is [3, 4]");
}

TEST(ViewErrors, ReshapeOfAStridedView) {
  auto x = Array<float>::full({4, 4}, 1.0f).named("x");
  expect_error([&] { x.transpose().reshape({16}); }, ErrorKind::Shape,
               "reshape: x [4, 4] is a non-contiguous view, so its elements cannot be "
               "reinterpreted as [16] without a copy; use copy().reshape(...)");
  expect_error([&] { x.reshape({15}); }, ErrorKind::Shape,
               "reshape: cannot reshape x [4, 4] (16 elements) to [15] (15 elements)");
}

TEST(ViewErrors, SliceAndPermuteAndBroadcastTo) {
  auto x = Array<float>::full({4, 4}, 1.0f).named("x");
  expect_error([&] { x.slice({Slice(0, 4, 0)}); }, ErrorKind::Shape,
               "slice: axis 0 of x [4, 4] has step 0; a step is a non-zero element distance (use "
               "select() to pick one element)");
  expect_error([&] { x.permute({0, 0}); }, ErrorKind::Shape,
               "permute: [0, 0] is not a permutation of the 2 axes of x [4, 4]");
  expect_error([&] { x.broadcast_to({4, 3}); }, ErrorKind::Shape,
               "broadcast_to: cannot broadcast x [4, 4] to [4, 3]: trailing axes must be equal or "
               "1 (NumPy rules)");
  expect_error([&] { x.select(2, 0); }, ErrorKind::Shape,
               "select: axis 2 is out of range for x [4, 4] (axes 0..1)");
}

TEST(ViewErrors, AssignIntoABroadcastView) {
  auto b = Array<float>::full({4}, 1.0f).named("b");
  int line = __LINE__ + 1;
  expect_error([&] { b.broadcast_to({3, 4}) = 2.0f; }, ErrorKind::Usage,
               "cannot assign to b in `b = 2` at " + here(line) + ": it is a broadcast view (shape [3, 4], axis 0 "
               "repeats one element with stride 0), so its elements are not distinct; assign to "
               "the array it was made from");
}

TEST(ViewErrors, OverlappingViewOfTheOutput) {
  auto m = Array<float>::full({3, 3}, 1.0f).named("m");
  int line = __LINE__ + 1;
  expect_error([&] { m = m.transpose() + 1.0f; }, ErrorKind::Usage,
               "operand m of `m = m + 1` at " + here(line) + " is another view of the memory output m writes "
               "(overlapping elements, other strides or offset), so the kernel could read "
               "elements it has already overwritten; copy the operand first: m.copy()");
}

TEST(ViewErrors, AxisViewsOfAZeroDArray) {
  auto s = Array<float>::full(Shape::scalar(), 1.0f).named("s");
  expect_error([&] { s.transpose(); }, ErrorKind::Shape,
               "transpose: s [] is 0-d and has no axes to reverse; use the array itself");
  expect_error([&] { s.slice({Slice(0, 1)}); }, ErrorKind::Shape,
               "slice: s [] is 0-d and has no axes to slice; read its element with item_sync(), "
               "or view it as [1] with reshape({1})");
  expect_error([&] { s.select(0, 0); }, ErrorKind::Shape, "select: s [] is 0-d and has no axis 0");
  expect_error([&] { s.expand_dims(2); }, ErrorKind::Shape,
               "expand_dims: axis 2 is out of range for s [] (axes 0..0)");
}

} // namespace
