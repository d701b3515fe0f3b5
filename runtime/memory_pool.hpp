// MemoryPool: the caching, stream-ordered allocator behind every array, one
// per device. It implements DeviceAllocator over a MemoryBackend, so the same
// policy runs on the GPU (DriverMemoryBackend) and on the CPU fallback
// (HostMemoryBackend), where CI tests it.
//
//   auto pool = make_host_pool(64 << 20);             // or make_device_pool(api, stream, quota)
//   Allocation a = pool->allocate(1000, stream);      // a 1024-byte block, cached after free
//   pool->deallocate(a, stream);                      // reusable at once on `stream`
//   fmt::print("{}\n", pool->stats().summary());
//
// Policy:
//  * Requests up to 1 MiB round to one of 44 size classes (size_classes.hpp)
//    and come from per-class free lists, each under its own spin lock (the
//    hot path: a lock and a vector pop; ~35 ns per allocate+free pair on an
//    H100 host). Larger requests round to a coarse granule and are served
//    best-fit from segments, splitting blocks and coalescing them on free
//    (memory_pool_arena.hpp; one lock, ~100 ns per pair). No lock is held
//    across a driver call except on the cross-stream path, which records or
//    queries an event under the class's (or the arena's) lock.
//  * Threads contend only when they use the same size class (or large
//    blocks) at once: one lock per class, not per thread or stream.
//  * Freed memory is cached, never returned on its own. A block freed on
//    stream S is reused at once on S, and on another stream only after an
//    event recorded on S has completed; the pool never blocks for that.
//  * A quota bounds the bytes reserved from the backend. When a request would
//    pass it, or the backend is out of memory, the pool releases cached
//    segments (least recently used first) and retries; then it spills
//    least-recently-used SpillableHandles to pinned host memory; only then
//    does it throw Error{OutOfMemory}, stating requested, in use, cached,
//    spilled and quota.
//  * Debug mode (options.debug or GPUKIT_POOL_DEBUG=1) fills freed memory
//    with a pattern, checks the pattern when the memory is handed out again
//    (use after free), and rejects double and foreign frees.
//
// Streams passed to allocate/deallocate must outlive the blocks cached for
// them: call retire_stream() (or trim()) before destroying one.
//
// Not handled here: several devices (make one pool per device), and memory
// shared between processes.
#pragma once

#include "runtime/allocator.hpp"
#include "runtime/memory_backend.hpp"
#include "runtime/pinned_host_pool.hpp"
#include "runtime/spillable_handle.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace gpukit::rt {

struct DriverApi;

namespace detail {
class MemoryArena;
class SmallBin;
class SpillRegistry;
} // namespace detail

struct MemoryPoolOptions {
  /// Most bytes the pool may reserve from the backend; 0: no quota of its own
  /// (the device's memory is the limit).
  size_t quota = 0;
  /// The stream meant by `nullptr` in allocate/deallocate.
  CUstream default_stream = nullptr;
  /// Pattern-fill freed memory and check it on reuse; also GPUKIT_POOL_DEBUG=1.
  bool debug = false;
  uint8_t debug_pattern = 0xDB;
};

struct MemoryPoolStats {
  size_t allocated = 0;      ///< bytes in blocks handed out (rounded sizes)
  /// The most `allocated` seen when the pool took new memory (a miss) or
  /// reported stats: a hit that reuses cached blocks is not sampled, so this
  /// can be lower than the true peak by memory that was cached anyway. (An
  /// exact peak would need a counter shared by all size classes on the hot
  /// path.) peak_reserved is exact.
  size_t peak_allocated = 0;
  size_t reserved = 0;       ///< bytes held from the backend
  size_t peak_reserved = 0;
  size_t cached = 0;         ///< reserved - allocated: free, kept for reuse
  size_t largest_free = 0;   ///< the largest contiguous free block
  /// External fragmentation: 1 - largest_free / cached (0 when nothing is
  /// cached). 0.9 means a request of a tenth of the cached bytes may not fit.
  double fragmentation = 0;
  size_t spilled = 0;        ///< bytes of spillable memory now in host memory
  size_t quota = 0;          ///< SIZE_MAX when there is none
  size_t segments = 0;
  uint64_t hits = 0;         ///< requests served from cached memory
  uint64_t misses = 0;       ///< requests that needed new memory or pressure relief
  uint64_t evictions = 0;    ///< cached segments released under pressure
  uint64_t spills = 0;       ///< arrays moved to host memory under pressure
  uint64_t restores = 0;     ///< spilled arrays brought back
  /// Pins that took a handle's mutex: the first on a stream, a restore, or
  /// one racing a spill. The rest (the common case) take no lock.
  uint64_t locked_pins = 0;
  uint64_t trims = 0;

  /// "allocated 1.00 MiB (peak 2.00 MiB), reserved 20.0 MiB, ...".
  std::string summary() const;
};

class MemoryPool final : public DeviceAllocator {
public:
  explicit MemoryPool(std::unique_ptr<MemoryBackend> backend, MemoryPoolOptions options = {});
  /// Releases all memory to the backend. Every SpillableHandle of this pool
  /// must be gone; plain Allocations still out are invalid afterwards.
  ~MemoryPool() override;
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  /// A block of at least `bytes` (the Allocation says `bytes`), 256-byte
  /// aligned, usable by work on `stream`. Zero bytes give an empty
  /// Allocation. Thread-safe.
  Allocation allocate(size_t bytes, CUstream stream = nullptr) override;
  /// Returns a block; work already ordered on `stream` may still use it.
  void deallocate(Allocation allocation, CUstream stream = nullptr) override;

  /// Memory that the pool may spill to host memory under pressure and bring
  /// back on next use; see SpillableHandle.
  SpillableHandle allocate_spillable(size_t bytes, CUstream stream = nullptr);

  /// Returns every cached block to the backend (waiting for streams that
  /// still own freed blocks). Returns the bytes released. With nothing
  /// allocated, reserved() is 0 afterwards.
  size_t trim();

  /// Call before destroying a stream that freed memory here: waits for the
  /// stream's work, makes its cached blocks usable on every stream and
  /// forgets it. (The pool records events on streams with cached blocks, so
  /// it must not hold on to a destroyed one.)
  void retire_stream(CUstream stream);

  MemoryPoolStats stats() const;
  size_t quota() const { return Quota.load(std::memory_order_relaxed); }
  /// A lower quota takes effect at the next growth (no memory is freed now).
  void set_quota(size_t bytes) { Quota.store(bytes ? bytes : SIZE_MAX); }
  bool debug() const { return Opts.debug; }
  CUstream default_stream() const { return Opts.default_stream; }
  MemoryBackend& backend() { return *Backend; }
  /// Pinned host memory of this pool (spill copies); the transfer engine may share it.
  PinnedHostPool& pinned() { return *Pinned; }

private:
  friend class SpillableHandle;
  friend class detail::SpillRegistry;

  CUstream resolve(CUstream stream) const { return stream ? stream : Opts.default_stream; }
  uint64_t allocate_small_slow(size_t cls, size_t bytes, CUstream stream);
  uint64_t obtain(size_t bytes, size_t requested, CUstream stream);
  bool release_cached(size_t need);
  /// Frees a block that no work uses any more (after a spill copy).
  void deallocate_idle(Allocation allocation);
  [[noreturn]] void throw_out_of_memory(size_t requested, bool quota_bound) const;
  Allocation allocate_large(size_t bytes, CUstream stream);
  size_t allocated_now() const;
  void sample_peak();
  void debug_on_allocate(Allocation allocation, size_t block, CUstream stream);
  void debug_on_free(Allocation allocation, size_t block, CUstream stream);
  void debug_forget(uint64_t base, size_t bytes);

  std::unique_ptr<MemoryBackend> Backend;
  MemoryPoolOptions Opts;
  std::atomic<size_t> Quota;
  std::unique_ptr<PinnedHostPool> Pinned;
  std::unique_ptr<detail::MemoryArena> Arena;
  std::unique_ptr<detail::SmallBin[]> Bins;
  std::unique_ptr<detail::SpillRegistry> Spills;

  // Small blocks in use are counted by their bins; large ones here.
  std::atomic<size_t> LargeAllocated{0};
  std::atomic<size_t> PeakAllocated{0}; ///< sampled on misses and in stats()
  std::atomic<uint64_t> LargeHits{0};
  std::atomic<uint64_t> Misses{0};
  std::atomic<uint64_t> Evictions{0};
  std::atomic<uint64_t> Trims{0};

  // Debug mode: live blocks (address -> requested bytes) and poisoned
  // ranges (start -> end) of freed memory still filled with the pattern.
  std::mutex DebugMutex;
  std::unordered_map<uint64_t, size_t> DebugLive;
  std::map<uint64_t, uint64_t> Poisoned;
};

/// A pool of device memory on `api`'s current context (or `context`).
/// `stream` is what nullptr means in allocate/deallocate; `quota` 0: none.
std::unique_ptr<MemoryPool> make_device_pool(const DriverApi& api, CUstream stream, size_t quota,
                                             CUcontext context = nullptr);
/// A pool over host memory: the CPU fallback's allocator, the same policy.
std::unique_ptr<MemoryPool> make_host_pool(size_t quota = 0, MemoryPoolOptions options = {});

} // namespace gpukit::rt
