#include "runtime/size_classes.hpp"

#include <gtest/gtest.h>

namespace gpukit::rt {
namespace {

TEST(SizeClasses, ClassesAreIncreasingAlignedAndRoundTrip) {
  size_t previous = 0;
  for (size_t c = 0; c < kNumSmallClasses; ++c) {
    size_t size = small_class_size(c);
    EXPECT_GT(size, previous) << "class " << c;
    EXPECT_EQ(size % kMinBlock, 0u) << "class " << c;
    EXPECT_EQ(small_class_of(size), c) << "size " << size;
    EXPECT_EQ(small_class_of(previous + 1), c) << "size " << previous + 1;
    previous = size;
  }
  EXPECT_EQ(previous, kSmallLimit);
  EXPECT_EQ(kNumSmallClasses, 44u);
}

TEST(SizeClasses, SmallRounding) {
  EXPECT_EQ(pool_block_size(1), 256u);
  EXPECT_EQ(pool_block_size(256), 256u);
  EXPECT_EQ(pool_block_size(257), 512u);
  EXPECT_EQ(pool_block_size(1000), 1024u);
  EXPECT_EQ(pool_block_size(1025), 1280u);
  EXPECT_EQ(pool_block_size(3000), 3072u);
  EXPECT_EQ(pool_block_size(4097), 5120u);
  EXPECT_EQ(pool_block_size(kSmallLimit), kSmallLimit);
}

TEST(SizeClasses, SmallWasteIsBounded) {
  // Above the linear range a block is at most 25% larger than the request.
  for (size_t bytes = kLinearLimit + 1; bytes <= kSmallLimit; bytes += 97) {
    size_t block = pool_block_size(bytes);
    ASSERT_GE(block, bytes);
    ASSERT_LE(block * 4, bytes * 5) << bytes;
  }
}

TEST(SizeClasses, LargeRoundingUsesCoarseGranules) {
  EXPECT_EQ(large_granule(kSmallLimit + 1), 128 * KiB);
  EXPECT_EQ(round_large(kSmallLimit + 1), kSmallLimit + 128 * KiB);
  EXPECT_EQ(round_large(5'000'000), 5 * MiB);
  EXPECT_EQ(round_large(6 * GiB), 6 * GiB);
  EXPECT_EQ(round_large(6 * GiB + 1), 6 * GiB + 2 * MiB);
  for (size_t bytes = kSmallLimit + 1; bytes < 64 * GiB; bytes = bytes * 3 / 2 + 12345) {
    size_t rounded = round_large(bytes);
    ASSERT_EQ(rounded % large_granule(bytes), 0u);
    ASSERT_GE(rounded, bytes);
    // At most 12.5% or one 2 MiB granule of waste.
    ASSERT_TRUE(rounded - bytes < bytes / 8 || rounded - bytes < kMaxLargeGranule) << bytes;
  }
}

TEST(SizeClasses, SlabsHoldSeveralBlocks) {
  EXPECT_EQ(small_class_slab_blocks(0), 1024u); // 256-byte blocks: 256 KiB slabs
  EXPECT_EQ(small_class_slab_blocks(small_class_of(4096)), 128u);
  EXPECT_EQ(small_class_slab_blocks(kNumSmallClasses - 1), 2u);
}

} // namespace
} // namespace gpukit::rt
