// Every run-time error message of the C++ DSL, by exact text. A message
// changes only with this file.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace ns1 {
GPUKIT_DEVICE_FUNCTION(float, twice, (float, x), { return 2.0f * x; });
}
namespace ns2 {
GPUKIT_DEVICE_FUNCTION(float, twice, (float, x), { return x + x; });
}
GPUKIT_DEVICE_FUNCTION(float, unbraced, (float, x), return x;);

namespace gpukit {
namespace {

/// Runs `f`, expecting Error{kind} with exactly `message`.
void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << to_string(e.kind()) << ": " << e.what();
    EXPECT_EQ(std::string(e.what()), message);
    return;
  }
  ADD_FAILURE() << "no gpukit::Error; expected: " << message;
}

std::string here(int line) { return "error/dsl_errors_test.cpp:" + std::to_string(line); }

TEST(DslErrors, ShapeMismatchNamesTheOperand) {
  auto x = Array<float>::full({1024}, 1.0f).named("x");
  auto y = Array<float>::full({1000}, 1.0f).named("y");
  Array<float> out(1024);
  out.named("out");
  int line = __LINE__ + 1;
  expect_error([&] { out = x + y; }, ErrorKind::Shape,
               "shape mismatch in `out = x + y` at " + here(line) +
                   ": out is [1024] but operand y is [1000]");
}

TEST(DslErrors, ShapeMismatchOfUnnamedArrays) {
  Array<float> a(Shape{4, 3}), b(Shape{3, 4}), out(Shape{4, 3});
  int line = __LINE__ + 1;
  expect_error([&] { out = 2.5f * a - sqrt(b); }, ErrorKind::Shape,
               "shape mismatch in `out = 2.5 * in0 - sqrt(in1)` at " + here(line) +
                   ": out is [4, 3] but operand in1 is [3, 4]");
}

TEST(DslErrors, ShapeMismatchOfTheOutput) {
  Array<int32_t> x(8), out(9);
  x.named("x");
  // The copy assignment operator cannot know where it was called from.
  expect_error([&] { out = x; }, ErrorKind::Shape,
               "shape mismatch in `out = x`: out is [9] but operand x is [8]");
  // A moved-from array is empty (and its name moved too).
  Array<int32_t> moved = std::move(x);
  int line = __LINE__ + 1;
  expect_error([&] { out = x + 1; }, ErrorKind::Shape,
               "shape mismatch in `out = in0 + 1` at " + here(line) +
                   ": out is [9] but operand in0 is [0]");
}

TEST(DslErrors, ShapeMismatchBetweenOutputs) {
  auto x = Array<double>::full({4}, 1.0).named("x");
  Array<double> a(4), b(5);
  a.named("a");
  b.named("b");
  int line = __LINE__ + 1;
  expect_error([&] { assign(a, x + 1.0, b, x * 2.0); }, ErrorKind::Shape,
               "shape mismatch in `a = x + 1; b = x * 2` at " + here(line) + ": a is [4] but b is [5]");
}

TEST(DslErrors, OneArrayTwiceAsOutput) {
  auto x = Array<double>::full({4}, 1.0).named("x");
  Array<double> a(4);
  a.named("a");
  int line = __LINE__ + 1;
  expect_error([&] { assign(a, x + 1.0, a, x * 2.0); }, ErrorKind::Usage,
               "outputs 1 and 2 of `a = x + 1; a = x * 2` at " + here(line) +
                   " are the same array (a); each output of one kernel must be a different array");
}

TEST(DslErrors, ScalarOutOfRangeForTheArraysType) {
  auto x = Array<uint8_t>::full({4}, 1).named("x");
  Array<uint8_t> out(4);
  out.named("out");
  int line = __LINE__ + 1;
  expect_error([&] { out = x + 300; }, ErrorKind::Type,
               "the scalar 300 in `out = x + 300` at " + here(line) +
                   " does not fit u8, the type it takes from the arrays it is combined with "
                   "(docs/TYPES.md); widen an array operand, e.g. cast<int32_t>(...)");
  auto i = Array<int32_t>::full({4}, 1).named("i");
  Array<int32_t> o32(4);
  o32.named("o32");
  line = __LINE__ + 1;
  expect_error([&] { o32 = i * 5000000000LL; }, ErrorKind::Type,
               "the scalar 5000000000 in `o32 = i * 5000000000` at " + here(line) +
                   " does not fit i32, the type it takes from the arrays it is combined with "
                   "(docs/TYPES.md); widen an array operand, e.g. cast<int64_t>(...)");
  line = __LINE__ + 1;
  expect_error([&] { out = x * -1; }, ErrorKind::Type,
               "the scalar -1 in `out = x * -1` at " + here(line) +
                   " does not fit u8, the type it takes from the arrays it is combined with "
                   "(docs/TYPES.md); widen an array operand, e.g. cast<int32_t>(...)");
}

TEST(DslErrors, ExpressionWithoutArraysHasNoShape) {
  expect_error([&] { Array<float> a(cast<float>(2) * 3); }, ErrorKind::Shape,
               "cannot make an Array from `cast<float>(2) * 3`: it has no array operand to take a "
               "shape from; use Array<T>::full(shape, value)");
}

TEST(DslErrors, HostCopiesOfTheWrongSize) {
  std::vector<float> three(3);
  expect_error([&] { Array<float>::from_host(three, {4}); }, ErrorKind::Shape,
               "from_host: 3 values for an array of shape [4] (4 elements)");
  Array<float> a(Shape{2, 2});
  expect_error([&] { a.to_host(std::span<float>(three)); }, ErrorKind::Shape,
               "to_host: 3 values for an array of shape [2, 2] (4 elements)");
}

TEST(DslErrors, BadShapes) {
  expect_error([] { Shape s{1, 2, 3, 4, 5}; }, ErrorKind::Shape,
               "a Shape has 0 to 4 dimensions, given 5 ([1, 2, 3, 4, 5])");
  // Empty braces would be ambiguous with Shape{} ([0]): 0-d is Shape::scalar().
  expect_error([] { Shape s({}); }, ErrorKind::Shape,
               "a Shape in braces has 1 to 4 extents, given none ([]): write Shape::scalar() for "
               "a 0-d shape (Shape{} is the empty 1-D shape [0])");
  expect_error([] { Shape s{3, -1}; }, ErrorKind::Shape, "shape [3, -1] has a negative extent");
  expect_error([] { Shape s{int64_t(1) << 40, int64_t(1) << 40}; }, ErrorKind::Shape,
               "shape [1099511627776, 1099511627776] has more than 2^63 elements");
}

TEST(DslErrors, BadArrayName) {
  Array<float> a(1);
  expect_error([&] { a.named("2x"); }, ErrorKind::Usage,
               "array name '2x' is not a C identifier (letters, digits and '_', not starting with "
               "a digit); it names a kernel parameter");
}

TEST(DslErrors, DeviceFunctionsWithOneNameAndTwoBodies) {
  auto x = Array<float>::full({4}, 1.0f).named("x");
  Array<float> out(4);
  expect_error([&] { out = ns1::twice(x) + ns2::twice(x); }, ErrorKind::Usage,
               "two different device functions are named 'twice'");
}

TEST(DslErrors, DeviceFunctionBodyWithoutBraces) {
  auto x = Array<float>::full({4}, 1.0f);
  Array<float> out(4);
  expect_error([&] { out = unbraced(x); }, ErrorKind::Usage,
               "GPUKIT_DEVICE_FUNCTION: the body must be in braces, e.g. { return x * x; }; given: "
               "return x;");
}

TEST(DslErrors, RawKernels) {
  expect_error([] { RawKernel k("", ""); }, ErrorKind::Usage,
               "RawKernel: the kernel name is empty; pass the name of the extern \"C\" __global__ "
               "function in the source");
  rt::Runtime& runtime = rt::Runtime::get();
  if (runtime.on_gpu())
    GTEST_SKIP() << "the CPU fallback's message needs the CPU fallback";
  RawKernel k("extern \"C\" __global__ void k(float* x) { x[0] = 1; }", "k");
  Array<float> x(1);
  expect_error([&] { k.launch(1, 1, x); }, ErrorKind::Unavailable,
               "raw CUDA kernels need a GPU: " + std::string(runtime.fallback_reason()));
}

} // namespace
} // namespace gpukit
