// The reference machinery itself: a poisoned (unwritten) output never
// passes, NaN never passes where a number is expected, tolerances hold.
#include "op_reference.hpp"

#include <gtest/gtest.h>

namespace gpukit::testing {
namespace {

template <typename R> std::string compare_with(const Array<R>& out, auto expected) {
  return compare(out, [&](size_t) { return expected; }, [](size_t) { return std::string("-"); },
                 false);
}

TEST(OpReference, PoisonedOutputsFail) {
  EXPECT_NE(compare_with(poisoned<float>(3), 1.0), "");
  EXPECT_NE(compare_with(poisoned<double>(3), 0.0), "");
  EXPECT_NE(compare_with(poisoned<half>(3), 1.0), "");
  EXPECT_NE(compare_with(poisoned<bfloat16>(3), 1.0), "");
  EXPECT_NE(compare_with(poisoned<int32_t>(3), int32_t{0}), "");
  EXPECT_NE(compare_with(poisoned<int64_t>(3), int64_t{0}), "");
  EXPECT_NE(compare_with(poisoned<uint8_t>(3), uint8_t{0}), "");
  // 0xAB is "true" if read as a bool; the raw byte check still fails it.
  EXPECT_NE(compare_with(poisoned<bool>(3), true), "");
  EXPECT_NE(compare_with(poisoned<bool>(3), false), "");
}

TEST(OpReference, NanFailsUnlessExpected) {
  auto nan = Array<float>::full({2}, std::nanf(""));
  EXPECT_NE(compare_with(nan, 1.0), "");
  EXPECT_EQ(compare_with(nan, std::nan("")), "");
  EXPECT_NE(compare_with(Array<float>::full({2}, 1.0f), std::nan("")), "");
}

TEST(OpReference, Tolerances) {
  EXPECT_EQ(compare_with(Array<float>::full({1}, 1.0f + 0x1p-23f), 1.0), "");
  EXPECT_NE(compare_with(Array<float>::full({1}, 1.0f + 0x1p-18f), 1.0), "");
  EXPECT_EQ(compare_with(Array<half>::full({1}, half(1.0f + 0x1p-10f)), 1.0), "");
  EXPECT_NE(compare_with(Array<half>::full({1}, half(1.0f + 0x1p-7f)), 1.0), "");
  EXPECT_EQ(compare_with(Array<float>::full({1}, INFINITY), INFINITY), "");
  EXPECT_NE(compare_with(Array<float>::full({1}, 3e38f), INFINITY), "");
}

TEST(OpReference, MismatchMessageNamesTheElement) {
  std::string err = compare_with(Array<int32_t>::full({2}, 5), int32_t{6});
  EXPECT_EQ(err, "2 of 2 elements wrong:\n  [0] -: got 5, expected 6\n  [1] -: got 5, expected 6");
}

} // namespace
} // namespace gpukit::testing
