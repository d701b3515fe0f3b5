// SpillableHandle::pin: a resident handle pinned on a stream it already used
// takes no lock (stats().locked_pins does not move), and lock-free pins never
// see memory that a concurrent spill moved or freed. Host backend.
#include "runtime/memory_pool.hpp"

#include "runtime/memory_backend_host.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace gpukit::rt {
namespace {

CUstream stream_id(uintptr_t id) { return reinterpret_cast<CUstream>(id); }
const CUstream S1 = stream_id(1);
const CUstream S2 = stream_id(2);

std::unique_ptr<MemoryPool> new_pool(size_t quota = 0, bool debug = false) {
  return std::make_unique<MemoryPool>(
      std::make_unique<HostMemoryBackend>(),
      MemoryPoolOptions{.quota = quota, .default_stream = S1, .debug = debug});
}

uint64_t locked_pins(const MemoryPool& pool) { return pool.stats().locked_pins; }

TEST(SpillableHandle, ResidentPinOnAKnownStreamTakesNoLock) {
  auto pool = new_pool();
  SpillableHandle h = pool->allocate_spillable(4 * KiB, S1);
  uint64_t address = h.pin(S1).address();
  uint64_t locked = locked_pins(*pool);
  for (int i = 0; i < 100; ++i) {
    SpillableHandle::Pin pin = h.pin(S1);
    ASSERT_EQ(pin.address(), address);
  }
  { SpillableHandle::Pin pin = h.pin(); } // nullptr: the pool's default, S1
  EXPECT_EQ(locked_pins(*pool), locked);

  // A new stream is recorded under the lock once, then is known.
  { SpillableHandle::Pin pin = h.pin(S2); }
  EXPECT_EQ(locked_pins(*pool), locked + 1);
  for (int i = 0; i < 10; ++i) {
    SpillableHandle::Pin p1 = h.pin(S1);
    SpillableHandle::Pin p2 = h.pin(S2); // pinned twice at once: both lock-free
  }
  EXPECT_EQ(locked_pins(*pool), locked + 1);
}

TEST(SpillableHandle, SpilledHandleRestoresUnderTheLockThenPinsLockFree) {
  auto pool = new_pool(24 * MiB);
  SpillableHandle a = pool->allocate_spillable(12 * MiB, S1);
  SpillableHandle b = pool->allocate_spillable(12 * MiB, S1);
  { SpillableHandle::Pin pin = b.pin(S1); } // a is the least recently used
  Allocation c = pool->allocate(12 * MiB, S1);
  ASSERT_TRUE(a.spilled());
  pool->deallocate(c, S1);

  uint64_t locked = locked_pins(*pool);
  { SpillableHandle::Pin pin = a.pin(S2); } // restores on S2
  EXPECT_FALSE(a.spilled());
  EXPECT_EQ(locked_pins(*pool), locked + 1);
  EXPECT_EQ(pool->stats().restores, 1u);
  { SpillableHandle::Pin pin = a.pin(S2); }
  EXPECT_EQ(locked_pins(*pool), locked + 1);
  // S1 used the memory before the spill, not since: recorded anew.
  { SpillableHandle::Pin pin = a.pin(S1); }
  EXPECT_EQ(locked_pins(*pool), locked + 2);
}

TEST(SpillableHandle, RetiredStreamIsForgotten) {
  auto pool = new_pool();
  SpillableHandle h = pool->allocate_spillable(4 * KiB, S1);
  { SpillableHandle::Pin pin = h.pin(S2); }
  uint64_t locked = locked_pins(*pool);
  pool->retire_stream(S2);
  // A stream with S2's value (a new one) is a new user: recorded again.
  { SpillableHandle::Pin pin = h.pin(S2); }
  EXPECT_EQ(locked_pins(*pool), locked + 1);
  { SpillableHandle::Pin pin = h.pin(S1); }
  EXPECT_EQ(locked_pins(*pool), locked + 1);
}

TEST(SpillableHandle, StreamsBeyondTheKnownOnesPinCorrectlyUnderTheLock) {
  auto pool = new_pool();
  SpillableHandle h = pool->allocate_spillable(4 * KiB, S1);
  uint64_t address = h.pin(S1).address();
  for (uintptr_t s = 2; s <= 6; ++s)
    EXPECT_EQ(h.pin(stream_id(s)).address(), address);
  // S1..S4 are mirrored for lock-free pins; S5 and S6 take the lock.
  uint64_t locked = locked_pins(*pool);
  for (uintptr_t s = 1; s <= 4; ++s)
    EXPECT_EQ(h.pin(stream_id(s)).address(), address);
  EXPECT_EQ(locked_pins(*pool), locked);
  EXPECT_EQ(h.pin(stream_id(6)).address(), address);
  EXPECT_EQ(locked_pins(*pool), locked + 1);
}

// The stress test --------------------------------------------------------------

/// The word `i` of `handle`'s data at `version`.
uint32_t word(uint32_t handle, uint32_t version, size_t i) {
  return (handle * 2654435761u) ^ (version * 40503u) ^ static_cast<uint32_t>(i * 2246822519u);
}

void write_pattern(const SpillableHandle::Pin& pin, size_t bytes, uint32_t handle,
                   uint32_t version) {
  auto* words = static_cast<uint32_t*>(pin.allocation().host_ptr());
  for (size_t i = 0; i < bytes / 4; ++i)
    words[i] = word(handle, version, i);
}

bool holds_pattern(const SpillableHandle::Pin& pin, size_t bytes, uint32_t handle,
                   uint32_t version) {
  const auto* words = static_cast<const uint32_t*>(pin.allocation().host_ptr());
  for (size_t i = 0; i < bytes / 4; ++i)
    if (words[i] != word(handle, version, i))
      return false;
  return true;
}

// Pinner threads pin a shared handle (read-only, pinned by every thread at
// once on several streams) and one of their own (rewritten with a new
// version under every pin) in a loop, as launches do, while a spiller thread
// keeps the pool over its quota with blocks it scribbles on. A pin that saw
// memory a spill moved or freed reads a wrong pattern (the spiller's
// scribble, or stale data), or writes to freed memory, which the pool's
// debug mode reports when the block is handed out again.
TEST(SpillableHandleStress, LockFreePinsRaceSpillsWithoutSeeingMovedMemory) {
  constexpr size_t kBytes = 256 * KiB;
  constexpr int kPinners = 3, kShared = 4, kOwned = 2, kRounds = 1500;
  auto pool = new_pool(/*quota=*/4 * MiB, /*debug=*/true);

  std::vector<SpillableHandle> shared, owned;
  for (uint32_t h = 0; h < kShared; ++h) {
    shared.push_back(pool->allocate_spillable(kBytes));
    write_pattern(shared.back().pin(), kBytes, h, 0);
  }
  std::vector<uint32_t> owned_version(kPinners * kOwned, 0);
  for (uint32_t h = 0; h < kPinners * kOwned; ++h) {
    owned.push_back(pool->allocate_spillable(kBytes));
    write_pattern(owned.back().pin(), kBytes, 100 + h, 0);
  }

  std::atomic<int> pinners_left{kPinners};
  std::atomic<uint64_t> bad{0}, pins{0}, pin_ooms{0}, spiller_rounds{0}, spiller_ooms{0};
  std::atomic<uint64_t> usage_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kPinners; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      const CUstream own = stream_id(100 + t);
      for (int round = 0; round < kRounds; ++round) {
        // Mostly the thread's stream; at times the default one, a stream
        // beyond the four a handle mirrors, or one retired right after.
        unsigned pick = rng() % 16;
        CUstream stream = pick == 0   ? S1
                          : pick == 1 ? stream_id(200 + t)
                          : pick == 2 ? stream_id(300 + t)
                                      : own;
        uint32_t s = rng() % kShared;
        uint32_t o = t * kOwned + rng() % kOwned;
        try {
          // Both operands of a "launch", pinned before either is read.
          SpillableHandle::Pin shared_pin = shared[s].pin(stream);
          SpillableHandle::Pin owned_pin = owned[o].pin(stream);
          pins.fetch_add(2, std::memory_order_relaxed);
          if (!holds_pattern(shared_pin, kBytes, s, 0) ||
              !holds_pattern(owned_pin, kBytes, 100 + o, owned_version[o]))
            bad.fetch_add(1);
          write_pattern(owned_pin, kBytes, 100 + o, ++owned_version[o]);
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::OutOfMemory)
            pin_ooms.fetch_add(1);
          else
            usage_errors.fetch_add(1);
        }
        if (pick == 2)
          pool->retire_stream(stream);
      }
      pinners_left.fetch_sub(1);
    });
  }
  threads.emplace_back([&] {
    std::mt19937 rng(99);
    const CUstream stream = stream_id(50);
    while (pinners_left.load() > 0) {
      std::vector<Allocation> blocks;
      try {
        // 4 to 8 blocks of the handles' size (their freed blocks are reused
        // first), at times a large one: past the quota with the handles.
        int count = 4 + rng() % 5;
        for (int i = 0; i < count; ++i)
          blocks.push_back(pool->allocate(kBytes, stream));
        if (rng() % 4 == 0)
          blocks.push_back(pool->allocate(2 * MiB, stream));
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::OutOfMemory)
          spiller_ooms.fetch_add(1);
        else
          usage_errors.fetch_add(1);
      }
      for (Allocation a : blocks)
        std::memset(a.host_ptr(), 0xEE, a.bytes);
      for (Allocation a : blocks)
        pool->deallocate(a, stream);
      spiller_rounds.fetch_add(1);
    }
  });
  for (std::thread& t : threads)
    t.join();

  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(usage_errors.load(), 0u) << "use after free seen by the pool's debug mode";
  EXPECT_EQ(pins.load() / 2 + pin_ooms.load(), uint64_t(kPinners) * kRounds);
  MemoryPoolStats s = pool->stats();
  EXPECT_GT(s.spills, 0u) << s.summary();
  EXPECT_GT(s.restores, 0u) << s.summary();
  EXPECT_LT(s.locked_pins, pins.load()) << "no pin took the lock-free path";
  RecordProperty("pins", std::to_string(pins.load()));
  RecordProperty("locked_pins", std::to_string(s.locked_pins));
  RecordProperty("spills", std::to_string(s.spills));
  RecordProperty("spiller_rounds", std::to_string(spiller_rounds.load()));
  RecordProperty("ooms", std::to_string(pin_ooms.load() + spiller_ooms.load()));

  // The books balance: what was spilled and not restored is in host memory.
  size_t spilled_handles = 0;
  for (std::vector<SpillableHandle>* handles : {&shared, &owned})
    for (SpillableHandle& h : *handles)
      spilled_handles += h.spilled();
  EXPECT_EQ(s.spills - s.restores, spilled_handles);
  EXPECT_EQ(s.spilled, spilled_handles * kBytes);
  EXPECT_LE(s.peak_reserved, 4 * MiB);

  // And every handle holds its last pattern, restored or not.
  for (uint32_t h = 0; h < kShared; ++h)
    EXPECT_TRUE(holds_pattern(shared[h].pin(), kBytes, h, 0)) << h;
  for (uint32_t h = 0; h < kPinners * kOwned; ++h)
    EXPECT_TRUE(holds_pattern(owned[h].pin(), kBytes, 100 + h, owned_version[h])) << h;
  EXPECT_EQ(pool->stats().spilled, 0u);
}

} // namespace
} // namespace gpukit::rt
