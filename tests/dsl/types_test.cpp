// The C++ front end types expressions at compile time; these pin its rules
// to docs/TYPES.md's tables (static_assert, for every pair of types and
// every scalar kind) and check at run time that the IR's infer_types agrees
// (every kernel build compares the two; here every pair is built).
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace gpukit {
namespace {

using AllTypes = std::tuple<bool, uint8_t, int32_t, int64_t, half, bfloat16, float, double>;

constexpr DType B = DType::Bool, U8 = DType::UInt8, I32 = DType::Int32, I64 = DType::Int64,
                F16 = DType::Float16, BF16 = DType::BFloat16, F32 = DType::Float32,
                F64 = DType::Float64;

// docs/TYPES.md, "Array with array", in AllTypes order.
constexpr DType kArrayTable[8][8] = {
    {B, U8, I32, I64, F16, BF16, F32, F64},           {U8, U8, I32, I64, F16, BF16, F32, F64},
    {I32, I32, I32, I64, F16, BF16, F32, F64},        {I64, I64, I64, I64, F16, BF16, F32, F64},
    {F16, F16, F16, F16, F16, F32, F32, F64},         {BF16, BF16, BF16, BF16, F32, BF16, F32, F64},
    {F32, F32, F32, F32, F32, F32, F32, F64},         {F64, F64, F64, F64, F64, F64, F64, F64},
};

// docs/TYPES.md, "Array with a C++ scalar": bool, integer, floating scalar.
constexpr DType kScalarTable[8][3] = {
    {B, I32, F32},    {U8, U8, F32},       {I32, I32, F32}, {I64, I64, F32},
    {F16, F16, F16},  {BF16, BF16, BF16},  {F32, F32, F32}, {F64, F64, F64},
};

template <typename A, typename Bt> using Sum = decltype(std::declval<const Array<A>&>() + std::declval<const Array<Bt>&>());

template <size_t I, size_t J> constexpr bool array_pair_matches() {
  using A = std::tuple_element_t<I, AllTypes>;
  using Bt = std::tuple_element_t<J, AllTypes>;
  constexpr DType sum = Sum<A, Bt>::dtype;
  constexpr DType product = decltype(std::declval<const Array<A>&>() * std::declval<const Array<Bt>&>())::dtype;
  constexpr DType minimum = decltype(min(std::declval<const Array<A>&>(), std::declval<const Array<Bt>&>()))::dtype;
  constexpr DType chosen = decltype(where(std::declval<const Array<bool>&>(), std::declval<const Array<A>&>(), std::declval<const Array<Bt>&>()))::dtype;
  constexpr DType less = decltype(std::declval<const Array<A>&>() < std::declval<const Array<Bt>&>())::dtype;
  constexpr DType power = decltype(pow(std::declval<const Array<A>&>(), std::declval<const Array<Bt>&>()))::dtype;
  return sum == kArrayTable[I][J] && sum == promote(dtype_of<A>, dtype_of<Bt>) &&
         product == sum && minimum == sum && chosen == sum && less == DType::Bool &&
         power == float_type_for(sum);
}

template <size_t I> constexpr bool scalar_row_matches() {
  using A = const Array<std::tuple_element_t<I, AllTypes>>&;
  return expr_dtype<decltype(std::declval<A>() + true)> == kScalarTable[I][0] &&
         expr_dtype<decltype(std::declval<A>() + 1)> == kScalarTable[I][1] &&
         expr_dtype<decltype(std::declval<A>() + 1L)> == kScalarTable[I][1] &&
         expr_dtype<decltype(2u * std::declval<A>())> == kScalarTable[I][1] &&
         expr_dtype<decltype(std::declval<A>() + 1.0f)> == kScalarTable[I][2] &&
         expr_dtype<decltype(std::declval<A>() * 1.0)> == kScalarTable[I][2] &&
         expr_dtype<decltype(std::declval<A>() * half(1.0f))> == kScalarTable[I][2];
}

template <size_t... I> constexpr bool all_pairs(std::index_sequence<I...>) {
  return ((array_pair_matches<I / 8, I % 8>()) && ...);
}
template <size_t... I> constexpr bool all_scalar_rows(std::index_sequence<I...>) {
  return (scalar_row_matches<I>() && ...);
}

static_assert(all_pairs(std::make_index_sequence<64>{}),
              "array-array promotion differs from docs/TYPES.md");
static_assert(all_scalar_rows(std::make_index_sequence<8>{}),
              "array-scalar promotion differs from docs/TYPES.md");

// Results of operations (docs/TYPES.md, "Results of operations").
using XF16 = const Array<half>&;
using XI32 = const Array<int32_t>&;
using XU8 = const Array<uint8_t>&;
static_assert(expr_dtype<decltype(sin(std::declval<XI32>()))> == F32);
static_assert(expr_dtype<decltype(sqrt(std::declval<XF16>()))> == F16);
static_assert(expr_dtype<decltype(floor(std::declval<XI32>()))> == I32);
static_assert(expr_dtype<decltype(abs(std::declval<XU8>()))> == U8);
static_assert(expr_dtype<decltype(-std::declval<XU8>())> == U8);
static_assert(expr_dtype<decltype(!std::declval<XF16>())> == B);
static_assert(expr_dtype<decltype(std::declval<XI32>() && 1.5)> == B);
static_assert(expr_dtype<decltype(cast<double>(std::declval<XI32>()))> == F64);
static_assert(expr_dtype<decltype(cast<int32_t>(2.5))> == I32);
// Array types promote first, then weak scalars join (NEP 50).
static_assert(expr_dtype<decltype(fma(std::declval<XI32>(), 2.0, std::declval<XF16>()))> == F16);
static_assert(expr_dtype<decltype(clamp(std::declval<XU8>(), 0, 300))> == U8);
static_assert(expr_dtype<decltype(where(std::declval<XI32>() > 0, 1.0f, std::declval<XF16>()))> == F16);
// Only scalars: weak, of the default type of the highest kind.
static_assert(expr_dtype<decltype(where(std::declval<XI32>() > 0, 1, 2.0))> == F32);
static_assert(decltype(where(std::declval<XI32>() > 0, 1, 2.0))::weak);
static_assert(expr_dtype<decltype(where(std::declval<XI32>() > 0, 1, 2) * std::declval<XU8>())> == U8);

TEST(Types, PredicateAndTranscendentalListsMatchTheIr) {
  for (int k = 0; k <= static_cast<int>(ir::Op::Select); ++k) {
    ir::Op op = static_cast<ir::Op>(k);
    EXPECT_EQ(detail::is_predicate_op(op), ir::is_predicate(op)) << ir::op_name(op);
    EXPECT_EQ(detail::is_transcendental_op(op), ir::is_transcendental(op)) << ir::op_name(op);
  }
}

// Building a kernel runs infer_types on the program and compares every
// strong node with the C++ type (Error{Internal} on a disagreement), so
// building one per pair checks every pair.
template <typename A, typename Bt> void build_pair() {
  Array<A> a(4);
  Array<Bt> b(4);
  Array<bool> c(4);
  Array<cpp_type_t<promote(dtype_of<A>, dtype_of<Bt>)>> out(4);
  EXPECT_NO_THROW(inspect(out, a + b)) << short_name(dtype_of<A>) << " + " << short_name(dtype_of<Bt>);
  EXPECT_NO_THROW(inspect(out, where(c, a, b * 2) - fma(a, b, 1)));
  Array<bool> less(4);
  EXPECT_NO_THROW(inspect(less, a < b || !(a >= b)));
  Array<float> f(4);
  EXPECT_NO_THROW(inspect(f, cast<float>(pow(a, b)) + sin(a) * 2.5));
}

template <size_t... I> void build_all_pairs(std::index_sequence<I...>) {
  (build_pair<std::tuple_element_t<I / 8, AllTypes>, std::tuple_element_t<I % 8, AllTypes>>(), ...);
}

TEST(Types, IrAgreesWithTheFrontEndForEveryPair) {
  build_all_pairs(std::make_index_sequence<64>{});
}

TEST(Types, WeakScalarsTakeTheArraysType) {
  auto x = Array<half>::full({3}, half(1.5f)).named("x");
  Array<half> out(3);
  KernelInfo k = inspect(out, x * 2.0 + 1);
  // Both scalars are passed as the array's type: no float32 arithmetic is
  // forced on the f16 array.
  EXPECT_NE(k.ir.find("s0: f16"), std::string::npos) << k.ir;
  EXPECT_NE(k.ir.find("s1: f16"), std::string::npos) << k.ir;
}

} // namespace
} // namespace gpukit
