#include "codegen/dtype.hpp"

#include <gtest/gtest.h>

namespace gpukit {
namespace {

// The promotion table of docs/TYPES.md, checked at compile time...
static_assert(promote(DType::UInt8, DType::Int32) == DType::Int32);
static_assert(promote(DType::Int64, DType::Float16) == DType::Float16);
static_assert(promote(DType::Float16, DType::BFloat16) == DType::Float32);
static_assert(promote(DType::Float16, DType::Int32) == DType::Float16);
static_assert(promote(DType::Bool, DType::UInt8) == DType::UInt8);
static_assert(promote(DType::Float32, DType::Float64) == DType::Float64);
static_assert(promote_with_scalar(DType::Int32, ScalarKind::Floating) == DType::Float32);
static_assert(promote_with_scalar(DType::Float16, ScalarKind::Floating) == DType::Float16);
static_assert(promote_with_scalar(DType::UInt8, ScalarKind::Integer) == DType::UInt8);
static_assert(promote_with_scalar(DType::Bool, ScalarKind::Integer) == DType::Int32);
static_assert(float_type_for(DType::Int64) == DType::Float32);
static_assert(float_type_for(DType::Float16) == DType::Float16);
static_assert(compute_type(DType::BFloat16) == DType::Float32);

// ...and in full at run time.
constexpr DType B = DType::Bool, U8 = DType::UInt8, I32 = DType::Int32, I64 = DType::Int64,
                F16 = DType::Float16, BF16 = DType::BFloat16, F32 = DType::Float32, F64 = DType::Float64;

TEST(DType, PromotionTable) {
  const DType expected[8][8] = {
      /*        bool  u8   i32  i64  f16   bf16  f32  f64 */
      /*bool*/ {B,    U8,  I32, I64, F16,  BF16, F32, F64},
      /*u8  */ {U8,   U8,  I32, I64, F16,  BF16, F32, F64},
      /*i32 */ {I32,  I32, I32, I64, F16,  BF16, F32, F64},
      /*i64 */ {I64,  I64, I64, I64, F16,  BF16, F32, F64},
      /*f16 */ {F16,  F16, F16, F16, F16,  F32,  F32, F64},
      /*bf16*/ {BF16, BF16, BF16, BF16, F32, BF16, F32, F64},
      /*f32 */ {F32,  F32, F32, F32, F32,  F32,  F32, F64},
      /*f64 */ {F64,  F64, F64, F64, F64,  F64,  F64, F64},
  };
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(promote(AllDTypes[a], AllDTypes[b]), expected[a][b])
          << short_name(AllDTypes[a]) << " with " << short_name(AllDTypes[b]);
      EXPECT_EQ(promote(AllDTypes[a], AllDTypes[b]), promote(AllDTypes[b], AllDTypes[a]));
    }
}

TEST(DType, WeakScalarTable) {
  const DType expected[8][3] = {
      /*        bool  int  float */
      /*bool*/ {B,    I32, F32},
      /*u8  */ {U8,   U8,  F32},
      /*i32 */ {I32,  I32, F32},
      /*i64 */ {I64,  I64, F32},
      /*f16 */ {F16,  F16, F16},
      /*bf16*/ {BF16, BF16, BF16},
      /*f32 */ {F32,  F32, F32},
      /*f64 */ {F64,  F64, F64},
  };
  const ScalarKind kinds[3] = {ScalarKind::Bool, ScalarKind::Integer, ScalarKind::Floating};
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(promote_with_scalar(AllDTypes[a], kinds[k]), expected[a][k]) << short_name(AllDTypes[a]);
}

TEST(DType, SizesAndNames) {
  const unsigned sizes[8] = {1, 1, 4, 8, 2, 2, 4, 8};
  const char* names[8] = {"bool", "u8", "i32", "i64", "f16", "bf16", "f32", "f64"};
  for (int a = 0; a < 8; ++a) {
    EXPECT_EQ(size_of(AllDTypes[a]), sizes[a]);
    EXPECT_EQ(short_name(AllDTypes[a]), names[a]);
  }
}

} // namespace
} // namespace gpukit
