// The memory pool's policy over the host backend (real host memory, streams
// simulated): rounding, caching, split/coalesce, stream-ordered reuse,
// quota and LRU release, out-of-memory text, trim and debug mode.
#include "runtime/memory_pool.hpp"

#include "runtime/memory_backend_host.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace gpukit::rt {
namespace {

CUstream stream_id(uintptr_t id) { return reinterpret_cast<CUstream>(id); }

const CUstream S1 = stream_id(1);
const CUstream S2 = stream_id(2);

/// A pool over host memory whose events the test completes by hand.
struct HostPool {
  explicit HostPool(MemoryPoolOptions options = {}, HostMemoryBackend::Options backend_options = {}) {
    events = std::make_shared<ManualEvents>();
    backend_options.events = events;
    auto owned = std::make_unique<HostMemoryBackend>(backend_options);
    backend = owned.get();
    if (!options.default_stream)
      options.default_stream = S1;
    pool = std::make_unique<MemoryPool>(std::move(owned), options);
  }

  std::shared_ptr<ManualEvents> events;
  HostMemoryBackend* backend = nullptr;
  std::unique_ptr<MemoryPool> pool;
};

std::string out_of_memory_message(MemoryPool& pool, size_t bytes) {
  try {
    Allocation a = pool.allocate(bytes);
    pool.deallocate(a);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    return e.what();
  }
  ADD_FAILURE() << "allocating " << bytes << " bytes did not fail";
  return "";
}

TEST(MemoryPool, ZeroBytesGiveAnEmptyAllocation) {
  HostPool h;
  Allocation a = h.pool->allocate(0);
  EXPECT_FALSE(a);
  h.pool->deallocate(a);
  EXPECT_EQ(h.pool->stats().allocated, 0u);
}

TEST(MemoryPool, AllocationsAreAlignedAndSayTheRequestedSize) {
  HostPool h;
  std::vector<Allocation> all;
  size_t expected = 0;
  for (size_t bytes : {1u, 255u, 256u, 1000u, 4097u, 70000u, 1u << 20, (1u << 20) + 1, 5'000'000u}) {
    Allocation a = h.pool->allocate(bytes);
    EXPECT_EQ(a.address % kAllocationAlignment, 0u) << bytes;
    EXPECT_EQ(a.bytes, bytes);
    std::memset(a.host_ptr(), 0x5A, bytes); // the memory is really there
    expected += pool_block_size(bytes);
    all.push_back(a);
  }
  EXPECT_EQ(h.pool->stats().allocated, expected);
  for (Allocation a : all)
    h.pool->deallocate(a);
  EXPECT_EQ(h.pool->stats().allocated, 0u);
}

TEST(MemoryPool, FreedBlocksAreCachedAndReusedOnTheSameStream) {
  HostPool h;
  Allocation a = h.pool->allocate(3000, S1);
  h.pool->deallocate(a, S1);
  uint64_t reserves = h.backend->reserve_calls();
  MemoryPoolStats before = h.pool->stats();
  // Same class (3072-byte blocks), same stream: the same block, at once,
  // although no event has completed.
  Allocation b = h.pool->allocate(2900, S1);
  EXPECT_EQ(b.address, a.address);
  EXPECT_EQ(h.backend->reserve_calls(), reserves);
  EXPECT_EQ(h.pool->stats().hits, before.hits + 1);
  EXPECT_EQ(h.events->host_waits(), 0u);
  h.pool->deallocate(b, S1);

  Allocation big = h.pool->allocate(24 * MiB, S1);
  h.pool->deallocate(big, S1);
  Allocation again = h.pool->allocate(23 * MiB, S1);
  EXPECT_EQ(again.address, big.address);
  EXPECT_EQ(h.backend->reserve_calls(), reserves + 1);
  h.pool->deallocate(again, S1);
}

TEST(MemoryPool, SmallBlocksOfAClassShareASlab) {
  HostPool h;
  Allocation a = h.pool->allocate(256);
  Allocation b = h.pool->allocate(256);
  EXPECT_EQ(b.address, a.address + 256);
  EXPECT_EQ(h.backend->reserve_calls(), 1u);
  EXPECT_EQ(h.pool->stats().reserved, 2 * MiB); // one small segment holds the slab
  h.pool->deallocate(a);
  h.pool->deallocate(b);
}

TEST(MemoryPool, LargeBlocksSplitAndCoalesce) {
  HostPool h;
  // 4 MiB requests share a 20 MiB segment, split off in address order.
  Allocation a = h.pool->allocate(4 * MiB, S1);
  Allocation b = h.pool->allocate(4 * MiB, S1);
  Allocation c = h.pool->allocate(4 * MiB, S1);
  EXPECT_EQ(b.address, a.address + 4 * MiB);
  EXPECT_EQ(c.address, b.address + 4 * MiB);
  MemoryPoolStats s = h.pool->stats();
  EXPECT_EQ(s.segments, 1u);
  EXPECT_EQ(s.reserved, 20 * MiB);
  EXPECT_EQ(s.largest_free, 8 * MiB);

  // A hole in the middle: 12 MiB cached, the largest piece 8 MiB.
  h.pool->deallocate(b, S1);
  s = h.pool->stats();
  EXPECT_EQ(s.cached, 12 * MiB);
  EXPECT_EQ(s.largest_free, 8 * MiB);
  EXPECT_NEAR(s.fragmentation, 1.0 - 8.0 / 12.0, 1e-9);

  // Freeing the neighbours coalesces everything into one block.
  h.pool->deallocate(a, S1);
  h.pool->deallocate(c, S1);
  s = h.pool->stats();
  EXPECT_EQ(s.largest_free, 20 * MiB);
  EXPECT_EQ(s.fragmentation, 0.0);
  // ... which serves a request as large as the segment without growing.
  Allocation whole = h.pool->allocate(20 * MiB, S1);
  EXPECT_EQ(whole.address, a.address);
  EXPECT_EQ(h.backend->reserve_calls(), 1u);
  h.pool->deallocate(whole, S1);
}

TEST(MemoryPool, FragmentationStaysBoundedUnderChurn) {
  HostPool h;
  std::vector<Allocation> live;
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (int i = 0; i < 4000; ++i) {
    if (live.size() < 40 && (next() % 3 != 0 || live.empty())) {
      size_t bytes = (size_t(1) << (next() % 24)) + next() % 4096;
      live.push_back(h.pool->allocate(bytes, S1));
    } else {
      size_t k = next() % live.size();
      h.pool->deallocate(live[k], S1);
      live[k] = live.back();
      live.pop_back();
    }
  }
  MemoryPoolStats during = h.pool->stats();
  EXPECT_LE(during.reserved, 8 * during.peak_allocated + 64 * MiB) << during.summary();
  for (Allocation a : live)
    h.pool->deallocate(a, S1);
  h.pool->trim();
  EXPECT_EQ(h.pool->stats().reserved, 0u);
}

TEST(MemoryPool, ReuseAcrossStreamsWaitsForAnEvent) {
  HostPool h;
  for (size_t bytes : {size_t(3000), size_t(24 * MiB)}) {
    SCOPED_TRACE(bytes);
    Allocation a = h.pool->allocate(bytes, S1);
    h.pool->deallocate(a, S1);
    uint64_t recorded = h.events->recorded();
    // S1's work may still use the block: S2 gets other memory, and the pool
    // records an event on S1 rather than blocking.
    Allocation b = h.pool->allocate(bytes, S2);
    EXPECT_NE(b.address, a.address);
    EXPECT_GT(h.events->recorded(), recorded);
    EXPECT_EQ(h.events->host_waits(), 0u);
    h.pool->deallocate(b, S2);
    // Still not done: S1's block is still not S2's, and b (S2's own) is.
    Allocation c = h.pool->allocate(bytes, S2);
    EXPECT_EQ(c.address, b.address);
    Allocation d = h.pool->allocate(bytes, S2);
    EXPECT_NE(d.address, a.address);
    h.pool->deallocate(c, S2);
    h.pool->deallocate(d, S2);
    // S1 finishes: its block becomes usable everywhere.
    h.events->complete(S1);
    Allocation e = h.pool->allocate(bytes, stream_id(3));
    Allocation f = h.pool->allocate(bytes, stream_id(3));
    EXPECT_TRUE(e.address == a.address || f.address == a.address);
    h.pool->deallocate(e, S1);
    h.pool->deallocate(f, S1);
    h.events->complete_all();
  }
  EXPECT_EQ(h.events->host_waits(), 0u);
}

TEST(MemoryPool, RetiringAStreamMakesItsBlocksUsableEverywhere) {
  HostPool h;
  const CUstream S3 = stream_id(3);
  Allocation small = h.pool->allocate(3000, S2);
  Allocation large = h.pool->allocate(24 * MiB, S2);
  h.pool->deallocate(small, S2);
  h.pool->deallocate(large, S2);
  h.pool->retire_stream(S2); // waits for S2 once, then forgets it
  EXPECT_EQ(h.events->host_waits(), 1u);
  EXPECT_EQ(h.pool->allocate(3000, S3).address, small.address);
  EXPECT_EQ(h.pool->allocate(24 * MiB, S3).address, large.address);
}

TEST(MemoryPool, NullStreamMeansTheDefaultStream) {
  HostPool h(MemoryPoolOptions{.default_stream = S2});
  Allocation a = h.pool->allocate(5000);
  h.pool->deallocate(a); // freed on S2
  EXPECT_EQ(h.pool->allocate(5000, S2).address, a.address);
}

TEST(MemoryPool, QuotaReleasesLeastRecentlyUsedSegmentsFirst) {
  HostPool h(MemoryPoolOptions{.quota = 64 * MiB});
  Allocation a = h.pool->allocate(24 * MiB, S1);
  Allocation b = h.pool->allocate(22 * MiB, S1);
  h.pool->deallocate(a, S1);
  h.pool->deallocate(b, S1);
  // Use b's segment again: a's is now the least recently used.
  Allocation b2 = h.pool->allocate(22 * MiB, S1);
  ASSERT_EQ(b2.address, b.address);
  h.pool->deallocate(b2, S1);
  EXPECT_EQ(h.pool->stats().reserved, 46 * MiB);

  // 46 + 30 > 64: releasing a's 24 MiB segment is enough.
  Allocation c = h.pool->allocate(30 * MiB, S1);
  MemoryPoolStats s = h.pool->stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.reserved, 52 * MiB);
  EXPECT_LE(s.reserved, s.quota);
  // b's segment is still cached.
  Allocation b3 = h.pool->allocate(22 * MiB, S1);
  EXPECT_EQ(b3.address, b.address);
  h.pool->deallocate(b3, S1);
  h.pool->deallocate(c, S1);
}

TEST(MemoryPool, BackendOutOfMemoryReleasesCachedMemoryAndRetries) {
  // No quota, but the "device" holds only 48 MiB.
  HostPool h({}, HostMemoryBackend::Options{.capacity = 48 * MiB});
  Allocation a = h.pool->allocate(24 * MiB, S1);
  h.pool->deallocate(a, S1);
  Allocation b = h.pool->allocate(40 * MiB, S1);
  EXPECT_TRUE(b);
  EXPECT_EQ(h.pool->stats().evictions, 1u);
  EXPECT_EQ(h.backend->reserved_bytes(), 40 * MiB);
  h.pool->deallocate(b, S1);
}

TEST(MemoryPool, OutOfMemoryStatesTheNumbers) {
  HostPool h(MemoryPoolOptions{.quota = 32 * MiB});
  Allocation a = h.pool->allocate(20 * MiB);
  EXPECT_EQ(out_of_memory_message(*h.pool, 16 * MiB),
            "out of host memory: requested 16.00 MiB; in use 20.00 MiB, cached 0 bytes, spilled 0 "
            "bytes, quota 32.00 MiB; raise the pool's quota, free arrays that are no longer "
            "needed, or work on smaller pieces");
  // The failed request left nothing behind.
  EXPECT_EQ(h.pool->stats().allocated, 20 * MiB);
  EXPECT_EQ(h.pool->stats().reserved, 20 * MiB);

  EXPECT_EQ(out_of_memory_message(*h.pool, 40 * MiB),
            "out of host memory: requested 40.00 MiB; in use 20.00 MiB, cached 0 bytes, spilled 0 "
            "bytes, quota 32.00 MiB; the request alone exceeds the quota; raise the pool's quota, "
            "free arrays that are no longer needed, or work on smaller pieces");
  h.pool->deallocate(a);
}

TEST(MemoryPool, OutOfBackendMemoryWithoutQuota) {
  HostPool h({}, HostMemoryBackend::Options{.capacity = 16 * MiB});
  Allocation a = h.pool->allocate(12 * MiB);
  EXPECT_EQ(out_of_memory_message(*h.pool, 8 * MiB),
            "out of host memory: requested 8.00 MiB; in use 12.00 MiB, cached 0 bytes, spilled 0 "
            "bytes, quota none; free arrays that are no longer needed, or work on smaller pieces");
  h.pool->deallocate(a);
}

TEST(MemoryPool, TrimReturnsAllCachedMemory) {
  HostPool h;
  std::vector<Allocation> all;
  for (size_t bytes : {100u, 3000u, 70000u, 900000u, 3u << 20, 30u << 20})
    for (int i = 0; i < 3; ++i)
      all.push_back(h.pool->allocate(bytes, i % 2 ? S1 : S2));
  for (size_t i = 0; i < all.size(); ++i)
    h.pool->deallocate(all[i], i % 3 ? S1 : S2);
  EXPECT_GT(h.pool->stats().cached, 0u);
  // Trim waits for the streams (events never completed by the test).
  size_t released = h.pool->trim();
  EXPECT_GT(released, 0u);
  MemoryPoolStats s = h.pool->stats();
  EXPECT_EQ(s.reserved, 0u) << s.summary();
  EXPECT_EQ(s.cached, 0u);
  EXPECT_EQ(h.backend->reserved_bytes(), 0u);
  EXPECT_EQ(h.backend->reserve_calls(), h.backend->release_calls());
}

TEST(MemoryPool, TrimKeepsMemoryInUse) {
  HostPool h;
  Allocation keep = h.pool->allocate(3000);
  Allocation drop = h.pool->allocate(30 * MiB);
  h.pool->deallocate(drop);
  h.pool->trim();
  EXPECT_EQ(h.pool->stats().reserved, 2 * MiB); // the small segment of `keep`
  std::memset(keep.host_ptr(), 1, keep.bytes);
  h.pool->deallocate(keep);
  h.pool->trim();
  EXPECT_EQ(h.pool->stats().reserved, 0u);
}

TEST(MemoryPool, StatsSummaryReadsWell) {
  HostPool h(MemoryPoolOptions{.quota = 1 * GiB});
  Allocation a = h.pool->allocate(4 * MiB);
  EXPECT_EQ(h.pool->stats().summary(),
            "allocated 4.00 MiB (peak 4.00 MiB), reserved 20.00 MiB (peak 20.00 MiB) in 1 "
            "segments, cached 16.00 MiB (largest free block 16.00 MiB, fragmentation 0.0%), "
            "spilled 0 bytes, quota 1.00 GiB; 0 hits, 1 misses, 0 evictions, 0 spills, 0 restores");
  h.pool->deallocate(a);
}

// Debug mode -----------------------------------------------------------------

TEST(MemoryPoolDebug, FreedMemoryIsFilledWithThePattern) {
  HostPool h(MemoryPoolOptions{.debug = true});
  Allocation a = h.pool->allocate(1000);
  std::memset(a.host_ptr(), 0, a.bytes);
  h.pool->deallocate(a);
  const auto* bytes = static_cast<const uint8_t*>(a.host_ptr());
  for (size_t i = 0; i < 1024; ++i)
    ASSERT_EQ(bytes[i], 0xDB) << i;
  // Reuse with the pattern intact is fine.
  Allocation b = h.pool->allocate(1000);
  EXPECT_EQ(b.address, a.address);
  h.pool->deallocate(b);
}

TEST(MemoryPoolDebug, UseAfterFreeIsCaught) {
  for (size_t bytes : {size_t(1000), size_t(3 * MiB)}) {
    SCOPED_TRACE(bytes);
    HostPool h(MemoryPoolOptions{.debug = true});
    Allocation a = h.pool->allocate(bytes);
    h.pool->deallocate(a);
    static_cast<uint8_t*>(a.host_ptr())[17] = 42; // a stale pointer writes
    try {
      h.pool->allocate(bytes);
      FAIL() << "use after free not detected";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("use after free"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("byte 17 of"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("holds 0x2a"), std::string::npos) << e.what();
    }
    // The block went back to the pool; nothing leaked.
    EXPECT_EQ(h.pool->stats().allocated, 0u);
  }
}

TEST(MemoryPoolDebug, DoubleAndForeignFreesAreCaught) {
  HostPool h(MemoryPoolOptions{.debug = true});
  Allocation a = h.pool->allocate(5000);
  h.pool->deallocate(a);
  try {
    h.pool->deallocate(a);
    FAIL() << "double free not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("double free"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> mine(4096);
  EXPECT_THROW(h.pool->deallocate(Allocation{reinterpret_cast<uintptr_t>(mine.data()), 100}),
               Error);
}

TEST(MemoryPool, LargeDoubleFreeIsCaughtEvenWithoutDebugMode) {
  HostPool h;
  Allocation a = h.pool->allocate(30 * MiB);
  h.pool->deallocate(a);
  EXPECT_THROW(h.pool->deallocate(a), Error);
}

TEST(MemoryPool, HostPoolFactory) {
  std::unique_ptr<MemoryPool> pool = make_host_pool(8 * MiB);
  EXPECT_EQ(pool->quota(), 8 * MiB);
  DeviceAllocator& allocator = *pool;
  Allocation a = allocator.allocate(123456);
  std::memset(a.host_ptr(), 7, a.bytes);
  allocator.deallocate(a);
  EXPECT_EQ(make_host_pool()->quota(), SIZE_MAX);
}

} // namespace
} // namespace gpukit::rt
