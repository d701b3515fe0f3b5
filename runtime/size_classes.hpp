// Size classes of the memory pool: how a request is rounded before the pool
// looks for a block. Small requests (up to kSmallLimit) fall into one of a few
// dozen fine classes served from per-class free lists; large ones are rounded
// to coarse granules and served best-fit from segments that split and coalesce.
//
//   size_t c = small_class_of(3000);          // the class of a 3000-byte request
//   size_t s = small_class_size(c);           // 3072
//   size_t l = round_large(5'000'000);        // 5 MiB + 256 KiB granule -> 5'242'880
//
// Everything here is constexpr arithmetic with no state; the pool's policy
// (which class goes where, how big a segment is) lives in memory_pool.cpp.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace gpukit::rt {

inline constexpr size_t KiB = size_t(1) << 10;
inline constexpr size_t MiB = size_t(1) << 20;
inline constexpr size_t GiB = size_t(1) << 30;

/// The smallest block, and the alignment of every block the pool hands out
/// (kAllocationAlignment in allocator.hpp).
inline constexpr size_t kMinBlock = 256;
/// Requests up to this size use the small classes.
inline constexpr size_t kSmallLimit = 1 * MiB;
/// Classes per doubling above 1 KiB: 4 bounds the rounding waste of a small
/// request to 25% of the request (20% of the block), the usual trade between
/// waste and the number of free lists (jemalloc, tcmalloc).
inline constexpr unsigned kClassesPerDoubling = 4;
/// Up to 1 KiB the classes are the multiples of 256 (256, 512, 768, 1024).
inline constexpr size_t kLinearLimit = 1 * KiB;
inline constexpr size_t kNumSmallClasses =
    kLinearLimit / kMinBlock +
    kClassesPerDoubling * (std::countr_zero(kSmallLimit) - std::countr_zero(kLinearLimit));

/// Large requests are rounded to a granule of an eighth of their leading
/// power of two (at most 12.5% waste), between these bounds: 2 MiB is the
/// driver's own page size, so a coarser granule would only waste memory.
inline constexpr size_t kMinLargeGranule = 64 * KiB;
inline constexpr size_t kMaxLargeGranule = 2 * MiB;

constexpr size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// The class index of a small request (1 <= bytes <= kSmallLimit).
constexpr size_t small_class_of(size_t bytes) {
  if (bytes <= kLinearLimit)
    return bytes <= kMinBlock ? 0 : (bytes - 1) / kMinBlock;
  // bytes in (2^k, 2^(k+1)]: four classes of width 2^(k-2) each.
  unsigned k = 63 - std::countl_zero(static_cast<uint64_t>(bytes - 1));
  size_t step = size_t(1) << (k - 2);
  size_t base = size_t(1) << k;
  size_t sub = (bytes - base + step - 1) / step; // 1..4
  size_t doublings = k - std::countr_zero(kLinearLimit);
  return kLinearLimit / kMinBlock - 1 + doublings * kClassesPerDoubling + sub;
}

/// The block size of small class `c`.
constexpr size_t small_class_size(size_t c) {
  constexpr size_t linear = kLinearLimit / kMinBlock;
  if (c < linear)
    return (c + 1) * kMinBlock;
  size_t rest = c - linear;
  size_t doubling = rest / kClassesPerDoubling;
  size_t sub = rest % kClassesPerDoubling + 1;
  size_t base = kLinearLimit << doubling;
  return base + sub * (base / kClassesPerDoubling);
}

/// How many blocks of small class `c` one slab holds: about 512 KiB of
/// them, never fewer than 2 (so a slab amortises its arena lookup) nor more
/// than 1024 (so a rarely used tiny class pins little memory).
constexpr size_t small_class_slab_blocks(size_t c) {
  size_t size = small_class_size(c);
  size_t blocks = 512 * KiB / size;
  return blocks < 2 ? 2 : blocks > 1024 ? 1024 : blocks;
}

/// The granule a large request of `bytes` is rounded to.
constexpr size_t large_granule(size_t bytes) {
  size_t granule = std::bit_floor(bytes) / 8;
  return granule < kMinLargeGranule ? kMinLargeGranule
         : granule > kMaxLargeGranule ? kMaxLargeGranule
                                      : granule;
}

/// A large request rounded to its granule.
constexpr size_t round_large(size_t bytes) { return align_up(bytes, large_granule(bytes)); }

/// The bytes a request occupies in the pool: its small class's size, or
/// the large rounding.
constexpr size_t pool_block_size(size_t bytes) {
  return bytes <= kSmallLimit ? small_class_size(small_class_of(bytes)) : round_large(bytes);
}

static_assert(small_class_size(small_class_of(kSmallLimit)) == kSmallLimit);
static_assert(small_class_of(kSmallLimit) == kNumSmallClasses - 1);

} // namespace gpukit::rt
