// PinnedHostPool: a cache of page-locked host memory. Pinning is slow
// (cuMemAllocHost maps and locks every page, milliseconds for large blocks),
// so the transfer engine's staging buffers and the memory pool's spill
// copies come from here and are kept for reuse.
//
//   PinnedHostPool pinned(backend);
//   PinnedBlock staging = pinned.allocate(8 << 20);   // empty when out of memory
//   ...; pinned.deallocate(staging);                   // cached, not unpinned
//
// Thread-safe (one mutex: pinned allocations are never on a hot path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace gpukit::rt {

class MemoryBackend;

/// Page-locked host memory owned by a PinnedHostPool.
struct PinnedBlock {
  void* data = nullptr;
  size_t bytes = 0; ///< usable size (at least what was asked for)

  explicit operator bool() const { return data != nullptr; }
};

struct PinnedHostPoolStats {
  size_t reserved = 0; ///< bytes pinned through the backend
  size_t in_use = 0;   ///< bytes handed out
  uint64_t hits = 0;   ///< allocations served from the cache
  uint64_t misses = 0; ///< allocations that pinned new memory
};

class PinnedHostPool {
public:
  explicit PinnedHostPool(MemoryBackend& backend) : Backend(backend) {}
  /// Unpins everything, also blocks still handed out.
  ~PinnedHostPool();
  PinnedHostPool(const PinnedHostPool&) = delete;
  PinnedHostPool& operator=(const PinnedHostPool&) = delete;

  /// At least `bytes` of pinned memory (a cached block at most 25% larger,
  /// or a new one); empty when the backend is out of pinned memory even
  /// after the cache was emptied.
  PinnedBlock allocate(size_t bytes);
  void deallocate(PinnedBlock block);
  /// Unpins every cached block; returns the bytes released.
  size_t trim();
  /// True when [pointer, pointer + bytes) lies inside one block of this pool.
  bool contains(const void* pointer, size_t bytes) const;
  PinnedHostPoolStats stats() const;

private:
  MemoryBackend& Backend;
  mutable std::mutex M;
  std::multimap<size_t, void*> Cached;     ///< free blocks by size
  std::map<uintptr_t, size_t> Blocks;      ///< every block by address
  PinnedHostPoolStats Stats;
};

} // namespace gpukit::rt
