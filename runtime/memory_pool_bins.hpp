// SmallBin (internal to the memory pool): the free blocks of one small size
// class. Blocks come in slabs carved from the arena; a freed block goes on a
// list of its stream and is handed out again in LIFO order (warm in cache).
//
//   uint64_t a = bin.allocate(stream);            // 0: nothing cached for this stream
//   if (!a) a = bin.add_slab(arena_block, n, stream);
//   bin.free(a, stream);
//
// Stream order as in the arena: a block freed on S is reusable at once on S;
// when another stream finds nothing, one event is recorded on S for all of
// S's free blocks, and they become idle (usable anywhere) once it completes.
// Each bin has its own spin lock, held for a push or a pop on the hot path;
// the bin also counts its blocks in use, so the hot path touches no counter
// shared between size classes.
#pragma once

#include "runtime/memory_backend.hpp"
#include "runtime/memory_pool_lock.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace gpukit::rt::detail {

class SmallBin {
public:
  SmallBin() = default;
  SmallBin(const SmallBin&) = delete;
  SmallBin& operator=(const SmallBin&) = delete;
  ~SmallBin();

  void init(MemoryBackend& backend, size_t block_size) {
    Backend = &backend;
    BlockSize = block_size;
  }
  size_t block_size() const { return BlockSize; }

  /// A cached block usable by work on `stream`, or 0.
  uint64_t allocate(CUstream stream);
  void free(uint64_t address, CUstream stream);
  /// Frees a block no work uses any more.
  void free_idle(uint64_t address);
  /// Adds a slab of `blocks` blocks at `base`, usable by work on `stream`;
  /// returns the first block, handed out at once.
  uint64_t add_slab(uint64_t base, size_t blocks, CUstream stream);
  /// Removes and returns {base, bytes} of each slab whose blocks are all
  /// free and idle. With `settle`, first waits for every stream that freed
  /// blocks here, so that all free blocks are idle.
  std::vector<std::pair<uint64_t, size_t>> take_free_slabs(bool settle);

  /// `stream` has finished all its work and is going away: its free blocks
  /// become idle and the bin forgets it.
  void retire(CUstream stream);

  size_t cached_bytes() const;
  uint64_t hits() const;
  /// Bytes in blocks handed out (read without the lock).
  size_t in_use_bytes() const { return InUse.load(std::memory_order_relaxed) * BlockSize; }

private:
  struct Fresh {
    CUstream Stream = nullptr;
    std::vector<uint64_t> Blocks;
  };
  struct Pending {
    CUstream Stream = nullptr;
    BackendEvent Event;
    uint64_t Seq = 0;
    std::vector<uint64_t> Blocks;
  };

  uint64_t pop(std::vector<uint64_t>& blocks) {
    uint64_t address = blocks.back();
    blocks.pop_back();
    --Cached;
    ++Hits;
    count_in_use(+1);
    return address;
  }
  /// Only ever changed under M: a plain store, no read-modify-write.
  void count_in_use(long delta) {
    InUse.store(InUse.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  bool poll();
  bool cover_other_streams(CUstream stream);

  MemoryBackend* Backend = nullptr;
  size_t BlockSize = 0;
  mutable SpinLock M;
  std::vector<Fresh> FreshLists;     ///< per stream: freed there, no event yet
  std::vector<Pending> PendingLists; ///< covered by an event not known complete
  std::vector<uint64_t> Idle;        ///< usable on every stream
  std::map<uint64_t, size_t> Slabs;  ///< base -> blocks
  uint64_t NextSeq = 1;
  size_t Cached = 0;
  uint64_t Hits = 0;
  std::atomic<size_t> InUse{0};
};

} // namespace gpukit::rt::detail
