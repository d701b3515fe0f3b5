// Many threads allocating and freeing random sizes on several streams: no
// block is handed out twice (each thread stamps its blocks and checks the
// stamp before freeing), and every byte is back after trim().
#include "runtime/memory_pool.hpp"

#include "runtime/memory_backend_host.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace gpukit::rt {
namespace {

CUstream stream_id(uintptr_t id) { return reinterpret_cast<CUstream>(id); }

struct Stamped {
  Allocation memory;
  CUstream stream;
  uint64_t stamp;
};

void stamp(const Stamped& s) {
  std::memcpy(s.memory.host_ptr(), &s.stamp, 8);
  std::memcpy(static_cast<char*>(s.memory.host_ptr()) + s.memory.bytes - 8, &s.stamp, 8);
}

bool stamped(const Stamped& s) {
  uint64_t head, tail;
  std::memcpy(&head, s.memory.host_ptr(), 8);
  std::memcpy(&tail, static_cast<const char*>(s.memory.host_ptr()) + s.memory.bytes - 8, 8);
  return head == s.stamp && tail == s.stamp;
}

/// Runs `threads` workers for `ops` operations each; returns the number of
/// corrupted blocks seen (two owners of one block).
size_t churn(MemoryPool& pool, int threads, int ops, size_t max_bytes, std::atomic<size_t>& ooms) {
  std::atomic<size_t> corrupt{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      std::vector<Stamped> live;
      // Each thread owns a stream; some frees go to a shared one.
      CUstream own = stream_id(100 + t), shared = stream_id(7);
      for (int i = 0; i < ops; ++i) {
        bool grow = live.size() < 16 && (live.empty() || rng() % 2);
        if (grow) {
          // Log-uniform sizes from 16 bytes to max_bytes.
          double exponent = std::uniform_real_distribution<double>(4, std::log2(max_bytes))(rng);
          size_t bytes = static_cast<size_t>(std::exp2(exponent));
          CUstream stream = rng() % 8 ? own : shared;
          try {
            Stamped s{pool.allocate(bytes, stream), stream, rng() | 1};
            stamp(s);
            live.push_back(s);
          } catch (const Error& e) {
            if (e.kind() != ErrorKind::OutOfMemory)
              throw;
            ++ooms;
          }
        } else {
          size_t k = rng() % live.size();
          if (!stamped(live[k]))
            ++corrupt;
          pool.deallocate(live[k].memory, rng() % 4 ? live[k].stream : shared);
          live[k] = live.back();
          live.pop_back();
        }
      }
      for (const Stamped& s : live) {
        if (!stamped(s))
          ++corrupt;
        pool.deallocate(s.memory, s.stream);
      }
    });
  }
  for (auto& w : workers)
    w.join();
  return corrupt.load();
}

TEST(MemoryPoolStress, ManyThreadsNoOverlapNoLeak) {
  auto events = std::make_shared<ImmediateEvents>();
  auto owned = std::make_unique<HostMemoryBackend>(HostMemoryBackend::Options{.events = events});
  HostMemoryBackend* backend = owned.get();
  MemoryPool pool(std::move(owned));
  std::atomic<size_t> ooms{0};
  EXPECT_EQ(churn(pool, 8, 20000, 4 * MiB, ooms), 0u);
  EXPECT_EQ(ooms.load(), 0u);
  MemoryPoolStats s = pool.stats();
  EXPECT_EQ(s.allocated, 0u) << s.summary();
  EXPECT_GT(s.hits, s.misses) << s.summary();
  pool.trim();
  s = pool.stats();
  EXPECT_EQ(s.reserved, 0u) << s.summary();
  EXPECT_EQ(backend->reserved_bytes(), 0u);
}

TEST(MemoryPoolStress, ManyThreadsUnderQuotaPressure) {
  // Events complete only when the pool waits for them: cross-stream reuse
  // needs the pool's settle under pressure.
  auto events = std::make_shared<ManualEvents>();
  auto owned = std::make_unique<HostMemoryBackend>(HostMemoryBackend::Options{.events = events});
  HostMemoryBackend* backend = owned.get();
  MemoryPool pool(std::move(owned), MemoryPoolOptions{.quota = 96 * MiB});
  std::atomic<size_t> ooms{0};
  EXPECT_EQ(churn(pool, 6, 5000, 8 * MiB, ooms), 0u);
  MemoryPoolStats s = pool.stats();
  EXPECT_EQ(s.allocated, 0u) << s.summary();
  EXPECT_LE(s.peak_reserved, 96 * MiB) << s.summary();
  RecordProperty("summary", s.summary());
  RecordProperty("ooms", static_cast<int>(ooms.load()));
  pool.trim();
  EXPECT_EQ(pool.stats().reserved, 0u);
  EXPECT_EQ(backend->reserved_bytes(), 0u);
  EXPECT_EQ(events->live(), 0u);
}

TEST(MemoryPoolStress, SpillablesAcrossThreads) {
  MemoryPool pool(std::make_unique<HostMemoryBackend>(), MemoryPoolOptions{.quota = 64 * MiB});
  std::vector<std::thread> workers;
  std::atomic<size_t> bad{0};
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<SpillableHandle> mine;
      for (int i = 0; i < 12; ++i) {
        mine.push_back(pool.allocate_spillable((2 + rng() % 4) * MiB));
        SpillableHandle::Pin pin = mine.back().pin();
        std::memset(pin.allocation().host_ptr(), t * 16 + i, mine.back().bytes());
      }
      for (int round = 0; round < 20; ++round) {
        size_t i = rng() % mine.size();
        SpillableHandle::Pin pin = mine[i].pin();
        const auto* bytes = static_cast<const uint8_t*>(pin.allocation().host_ptr());
        if (bytes[0] != t * 16 + i || bytes[mine[i].bytes() - 1] != t * 16 + i)
          ++bad;
      }
    });
  }
  for (auto& w : workers)
    w.join();
  EXPECT_EQ(bad.load(), 0u);
  MemoryPoolStats s = pool.stats();
  EXPECT_GT(s.spills, 0u) << s.summary();
  EXPECT_LE(s.peak_reserved, 64 * MiB);
}

} // namespace
} // namespace gpukit::rt
