// SpillRegistry (internal to the memory pool): the pool's SpillableHandles
// and the policy that moves them to pinned host memory under pressure.
//
//   SpillEntry* e = registry.add(allocation, stream);   // allocate_spillable
//   size_t freed = registry.spill(need);                // the pool, out of memory
//   registry.restore(*e, stream);                       // SpillableHandle::pin
//
// Locking: the registry mutex guards the list of entries and is held while
// a spill runs (so no entry is deleted under it); each entry has its own
// mutex for its state. A pin raises the entry's atomic pin count *before*
// taking the entry mutex, and the spiller skips pinned entries without
// locking them, so a pin that restores (and may itself trigger spills of
// other entries) never deadlocks with a spiller.
#pragma once

#include "runtime/allocator.hpp"
#include "runtime/pinned_host_pool.hpp"

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gpukit::rt {

class MemoryPool;

namespace detail {

struct SpillEntry {
  MemoryPool* Pool = nullptr;
  size_t Bytes = 0;
  std::atomic<int> Pins{0};
  std::atomic<uint64_t> LastUse{0};
  std::mutex M;
  // Guarded by M.
  Allocation Device;            ///< valid while resident
  PinnedBlock Host;             ///< valid while spilled
  std::vector<CUstream> Uses;   ///< streams that used the memory since it was placed
  bool Spilled = false;
};

class SpillRegistry {
public:
  explicit SpillRegistry(MemoryPool& pool) : Pool(pool) {}

  SpillEntry* add(Allocation memory, CUstream stream);
  /// Unregisters and frees `entry` (the handle is going away).
  void remove(SpillEntry* entry);
  /// Spills unpinned entries, least recently used first (those whose streams
  /// are idle before those with pending work), until at least `need` bytes
  /// of device memory were freed or none is left. Returns the bytes freed.
  size_t spill(size_t need);
  /// Brings a spilled entry back (entry.M held, entry pinned by the caller).
  void restore(SpillEntry& entry, CUstream stream);
  /// Drops `stream` from every entry's list of users (it is going away).
  void forget_stream(CUstream stream);
  /// Ticks for LRU order.
  uint64_t tick() { return Clock.fetch_add(1, std::memory_order_relaxed) + 1; }

  size_t spilled_bytes() const { return SpilledBytes.load(std::memory_order_relaxed); }
  uint64_t spills() const { return Spills.load(std::memory_order_relaxed); }
  uint64_t restores() const { return Restores.load(std::memory_order_relaxed); }
  /// Entries a spill had to skip last time because they were pinned, and
  /// those it could not spill for lack of pinned host memory (OOM message).
  size_t last_busy() const { return LastBusy.load(std::memory_order_relaxed); }
  size_t last_no_host_memory() const { return LastNoHost.load(std::memory_order_relaxed); }
  size_t size() const;

  /// Orders the copy of `entry` after every stream that used it; returns the
  /// stream to use (entry.M held).
  CUstream order_uses(SpillEntry& entry);

private:
  bool spill_one(SpillEntry& entry);

  MemoryPool& Pool;
  mutable std::mutex M;
  std::vector<SpillEntry*> Entries;
  std::atomic<uint64_t> Clock{0};
  std::atomic<size_t> SpilledBytes{0};
  std::atomic<uint64_t> Spills{0};
  std::atomic<uint64_t> Restores{0};
  std::atomic<size_t> LastBusy{0};
  std::atomic<size_t> LastNoHost{0};
};

} // namespace detail
} // namespace gpukit::rt
