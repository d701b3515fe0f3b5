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
// other entries) never deadlocks with a spiller. Whoever holds the registry
// mutex only try-locks entries (forget_stream retries the busy ones with it
// released), as a restoring pin holds its entry's lock and may need it.
//
// Lock-free pins: the common pin (resident entry, stream already among its
// users) takes no mutex. The entry's atomic State says Resident, Spilling or
// Spilled; only a holder of the entry mutex changes it. The two sides pair
// up like Dekker's algorithm, all four accesses seq_cst:
//
//   pinner:  Pins += 1;           if State == Resident: fast path
//   spiller: State = Spilling;    if Pins == 0: spill, else State = Resident
//
// In the single total order of seq_cst operations, either the pinner's
// State load comes after the spiller's store (it sees Spilling, or Spilled,
// or the Resident a backing-off spiller or a restore stored later) and it
// takes the locked path, which waits for the spill and restores; or the load
// comes before the store, so the pinner's increment does too and the spiller
// sees the pin and backs off. So a fast pin never overlaps a spill, and
// Device and the users mirror (Known), which change only under the mutex
// while no pin can be on the fast path (Spilling or Spilled; a restore
// writes them before storing Resident, which publishes them), are read
// without the lock.
#pragma once

#include "runtime/allocator.hpp"
#include "runtime/pinned_host_pool.hpp"

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gpukit::rt {

class MemoryPool;

namespace detail {

class SpillRegistry;

enum class SpillState : uint8_t {
  Resident, ///< in device memory; pins may take the fast path
  Spilling, ///< a spiller holds the mutex and may move it: pins lock
  Spilled,  ///< in host memory: the next pin restores it
};

struct SpillEntry {
  /// Streams mirrored in Known: a handle used on more streams pins on the
  /// others through the mutex.
  static constexpr uint32_t kKnownStreams = 4;

  // What a fast pin and unpin touch comes first.
  MemoryPool* Pool = nullptr;
  SpillRegistry* Registry = nullptr;
  std::atomic<int> Pins{0};
  /// Written under M only; read by pins without it (see the file comment).
  std::atomic<SpillState> State{SpillState::Resident};
  /// The first KnownCount entries of Uses (at most kKnownStreams), for pins
  /// to find their stream without the lock. Written under M; shrunk only
  /// while no pin is on the fast path, except by forget_stream (below).
  std::atomic<uint32_t> KnownCount{0};
  std::array<std::atomic<CUstream>, kKnownStreams> Known{};
  /// Written under M while no pin can be on the fast path (the state is
  /// Spilling, or Spilled until a restore stores Resident): pins on the fast
  /// path read it without the lock.
  Allocation Device;            ///< valid while resident
  std::atomic<uint64_t> LastUse{0};
  size_t Bytes = 0;
  std::mutex M;
  // Guarded by M.
  PinnedBlock Host;             ///< valid while spilled
  std::vector<CUstream> Uses;   ///< streams that used the memory since it was placed

  /// Whether `stream` is known to be among Uses, without the lock. False
  /// negatives (a stream beyond kKnownStreams) only cost the locked path.
  bool knows(CUstream stream) const {
    uint32_t count = KnownCount.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count; ++i)
      if (Known[i].load(std::memory_order_relaxed) == stream)
        return true;
    return false;
  }
  /// Adds `stream` to Uses if it is not there yet (M held).
  void add_use(CUstream stream);
  /// Rewrites Known from Uses after Uses shrank (M held).
  void publish_uses();
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
  /// Drops `stream` from every entry's list of users (it is going away; no
  /// pin on it may run concurrently, as none may use a stream being retired).
  void forget_stream(CUstream stream);
  /// Ticks for LRU order.
  uint64_t tick() { return Clock.fetch_add(1, std::memory_order_relaxed) + 1; }
  /// A pin had to take the entry's mutex (first use on a stream, a restore,
  /// or a spill in progress): counts them for stats().
  void count_locked_pin() { LockedPins.fetch_add(1, std::memory_order_relaxed); }

  size_t spilled_bytes() const { return SpilledBytes.load(std::memory_order_relaxed); }
  uint64_t spills() const { return Spills.load(std::memory_order_relaxed); }
  uint64_t restores() const { return Restores.load(std::memory_order_relaxed); }
  uint64_t locked_pins() const { return LockedPins.load(std::memory_order_relaxed); }
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
  std::atomic<uint64_t> LockedPins{0};
  std::atomic<size_t> LastBusy{0};
  std::atomic<size_t> LastNoHost{0};
};

} // namespace detail
} // namespace gpukit::rt
