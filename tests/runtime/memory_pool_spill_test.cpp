// Spilling: under pressure the pool moves least-recently-used, unpinned
// SpillableHandles to pinned host memory and brings them back on pin(),
// with the data intact. Host backend; the order of events is simulated.
#include "runtime/memory_pool.hpp"

#include "runtime/memory_backend_host.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace gpukit::rt {
namespace {

CUstream stream_id(uintptr_t id) { return reinterpret_cast<CUstream>(id); }
const CUstream S1 = stream_id(1);
const CUstream S2 = stream_id(2);

struct SpillPool {
  SpillPool(size_t quota, size_t pinned_capacity = SIZE_MAX) {
    events = std::make_shared<ManualEvents>();
    auto owned = std::make_unique<HostMemoryBackend>(
        HostMemoryBackend::Options{.pinned_capacity = pinned_capacity, .events = events});
    backend = owned.get();
    pool = std::make_unique<MemoryPool>(std::move(owned),
                                        MemoryPoolOptions{.quota = quota, .default_stream = S1});
  }
  std::shared_ptr<ManualEvents> events;
  HostMemoryBackend* backend = nullptr;
  std::unique_ptr<MemoryPool> pool;
};

/// Fills the handle's memory with a pattern derived from `seed`.
void fill(SpillableHandle& h, uint32_t seed) {
  SpillableHandle::Pin pin = h.pin();
  auto* words = static_cast<uint32_t*>(pin.allocation().host_ptr());
  for (size_t i = 0; i < h.bytes() / 4; ++i)
    words[i] = seed * 2654435761u + static_cast<uint32_t>(i);
}

/// Whether the handle's memory still holds fill(seed)'s pattern.
bool holds(SpillableHandle& h, uint32_t seed) {
  SpillableHandle::Pin pin = h.pin();
  const auto* words = static_cast<const uint32_t*>(pin.allocation().host_ptr());
  for (size_t i = 0; i < h.bytes() / 4; ++i)
    if (words[i] != seed * 2654435761u + static_cast<uint32_t>(i))
      return false;
  return true;
}

TEST(MemoryPoolSpill, LeastRecentlyUsedHandleIsSpilledAndRestoredIntact) {
  SpillPool p(32 * MiB);
  SpillableHandle a = p.pool->allocate_spillable(12 * MiB);
  SpillableHandle b = p.pool->allocate_spillable(12 * MiB);
  fill(a, 1);
  fill(b, 2); // b used last
  // 12 + 12 + 12 > 32: a, the least recently used, goes to host memory.
  Allocation c = p.pool->allocate(12 * MiB);
  EXPECT_TRUE(a.spilled());
  EXPECT_FALSE(b.spilled());
  MemoryPoolStats s = p.pool->stats();
  EXPECT_EQ(s.spills, 1u);
  EXPECT_EQ(s.spilled, 12 * MiB);
  EXPECT_LE(s.reserved, 32 * MiB);

  p.pool->deallocate(c);
  // Pinning brings a back, data intact (possibly at a new address).
  EXPECT_TRUE(holds(a, 1));
  EXPECT_FALSE(a.spilled());
  EXPECT_TRUE(holds(b, 2));
  s = p.pool->stats();
  EXPECT_EQ(s.restores, 1u);
  EXPECT_EQ(s.spilled, 0u);
}

TEST(MemoryPoolSpill, PinnedHandlesAreNeverSpilled) {
  SpillPool p(32 * MiB);
  SpillableHandle a = p.pool->allocate_spillable(12 * MiB);
  SpillableHandle b = p.pool->allocate_spillable(12 * MiB);
  SpillableHandle::Pin pa = a.pin();
  SpillableHandle::Pin pb = b.pin();
  try {
    p.pool->allocate(12 * MiB);
    FAIL() << "allocation beyond the quota succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_EQ(std::string(e.what()),
              "out of host memory: requested 12.00 MiB; in use 24.00 MiB, cached 0 bytes, spilled "
              "0 bytes, quota 32.00 MiB; 2 spillable arrays pinned by pending launches could not "
              "be spilled; raise the pool's quota, free arrays that are no longer needed, or work "
              "on smaller pieces");
  }
  EXPECT_FALSE(a.spilled());
  EXPECT_FALSE(b.spilled());
  EXPECT_EQ(pa.address(), a.pin().address());
}

TEST(MemoryPoolSpill, PinningOneOperandMaySpillAnother) {
  SpillPool p(24 * MiB);
  SpillableHandle a = p.pool->allocate_spillable(12 * MiB);
  SpillableHandle b = p.pool->allocate_spillable(12 * MiB);
  fill(a, 10);
  fill(b, 20);
  Allocation c = p.pool->allocate(12 * MiB); // spills a
  ASSERT_TRUE(a.spilled());
  p.pool->deallocate(c);
  {
    // A launch on both: b is pinned first, so restoring a cannot spill b.
    SpillableHandle::Pin pb = b.pin();
    SpillableHandle::Pin pa = a.pin();
    EXPECT_NE(pa.address(), pb.address());
  }
  EXPECT_TRUE(holds(a, 10));
  EXPECT_TRUE(holds(b, 20));
}

TEST(MemoryPoolSpill, HandlesWithPendingWorkAreSpilledLast) {
  SpillPool p(32 * MiB);
  const CUstream busy = stream_id(3), idle = stream_id(4);
  p.events->set_auto_complete(idle, true); // nothing pending on `idle`
  SpillableHandle x = p.pool->allocate_spillable(12 * MiB, busy);
  SpillableHandle y = p.pool->allocate_spillable(12 * MiB, idle);
  { SpillableHandle::Pin pin = x.pin(busy); }
  { SpillableHandle::Pin pin = y.pin(idle); }
  // x is the least recently used, but a launch on `busy` may still use it:
  // y, whose stream is idle, is spilled instead.
  Allocation c = p.pool->allocate(12 * MiB, S1);
  EXPECT_FALSE(x.spilled());
  EXPECT_TRUE(y.spilled());
  p.pool->deallocate(c, S1);
}

TEST(MemoryPoolSpill, NoPinnedHostMemoryMeansNoSpill) {
  SpillPool p(24 * MiB, /*pinned_capacity=*/1 * MiB);
  SpillableHandle a = p.pool->allocate_spillable(12 * MiB);
  SpillableHandle b = p.pool->allocate_spillable(12 * MiB);
  try {
    p.pool->allocate(12 * MiB);
    FAIL() << "allocation beyond the quota succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 arrays could not be spilled for lack of pinned host "
                                         "memory"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(a.spilled());
}

TEST(MemoryPoolSpill, ManySmallHandlesSpillUntilEnoughIsFree) {
  SpillPool p(16 * MiB);
  std::vector<SpillableHandle> handles;
  for (uint32_t i = 0; i < 40; ++i) {
    handles.push_back(p.pool->allocate_spillable(300 * KiB + i * 1000));
    fill(handles.back(), i);
  }
  // 40 x ~320 KiB fills most of the quota: a 10 MiB array needs spills.
  Allocation big = p.pool->allocate(10 * MiB);
  MemoryPoolStats s = p.pool->stats();
  EXPECT_GT(s.spills, 0u);
  EXPECT_LE(s.reserved, 16 * MiB);
  p.pool->deallocate(big);
  for (uint32_t i = 0; i < 40; ++i)
    EXPECT_TRUE(holds(handles[i], i)) << i;
  handles.clear();
  p.pool->trim();
  EXPECT_EQ(p.pool->stats().reserved, 0u);
  EXPECT_EQ(p.backend->pinned_bytes(), 0u);
}

TEST(MemoryPoolSpill, DestroyingASpilledHandleFreesItsHostCopy) {
  SpillPool p(24 * MiB);
  SpillableHandle a = p.pool->allocate_spillable(12 * MiB);
  SpillableHandle b = p.pool->allocate_spillable(12 * MiB);
  { SpillableHandle::Pin pin = b.pin(); }
  Allocation c = p.pool->allocate(12 * MiB);
  ASSERT_TRUE(a.spilled());
  a.reset();
  EXPECT_EQ(p.pool->stats().spilled, 0u);
  b.reset();
  p.pool->deallocate(c);
  p.pool->trim();
  EXPECT_EQ(p.backend->pinned_bytes(), 0u);
  EXPECT_EQ(p.pool->stats().reserved, 0u);
}

} // namespace
} // namespace gpukit::rt
