// MemoryArena (internal to the memory pool): the large-block allocator. It
// reserves segments from a MemoryBackend, serves requests best-fit from
// their free blocks, splits a block and keeps the remainder, and coalesces a
// freed block with free neighbours in its segment.
//
//   MemoryArena arena(backend);
//   uint64_t a = arena.allocate_cached(4 << 20, stream);     // 0: nothing cached fits
//   if (!a) a = arena.allocate_new(4 << 20, stream, quota, why);
//   arena.free(a, stream);
//
// Reuse is stream-ordered: a block freed on stream S is reusable at once by
// work on S; it becomes *idle* (reusable on every stream) once an event
// recorded on S after the free has completed. Events are recorded lazily, in
// batches: only when another stream looks for memory and finds none of its
// own. Idle free blocks coalesce with idle neighbours; a segment whose one
// block is idle and free can go back to the backend.
//
// Thread-safe: one spin lock, held for a set lookup and a few pointer
// updates; segments are reserved and released outside it.
#pragma once

#include "runtime/memory_backend.hpp"
#include "runtime/memory_pool_lock.hpp"

#include <llvm/ADT/DenseMap.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace gpukit::rt::detail {

struct ArenaBlock;
struct ArenaSegment;

/// Best fit: smallest size first, then lowest address (deterministic).
struct ArenaBlockBySize {
  bool operator()(const ArenaBlock* a, const ArenaBlock* b) const;
};
using ArenaFreeSet = std::set<ArenaBlock*, ArenaBlockBySize>;

struct ArenaBlock {
  uint64_t Address = 0;
  size_t Size = 0;
  ArenaSegment* Segment = nullptr;
  ArenaBlock* Prev = nullptr; ///< neighbours in address order, same segment
  ArenaBlock* Next = nullptr;
  bool Allocated = false;
  /// Free and no work uses it: reusable on every stream.
  bool Idle = false;
  /// Free and not idle: the stream that freed it, and the event batch on
  /// that stream that covers the free (0: none recorded yet).
  CUstream Stream = nullptr;
  uint64_t Cover = 0;
  /// This block's node in a free set, kept while the block is in none, so
  /// moving a block in and out of the sets never allocates.
  ArenaFreeSet::node_type Node;
};

inline bool ArenaBlockBySize::operator()(const ArenaBlock* a, const ArenaBlock* b) const {
  return a->Size != b->Size ? a->Size < b->Size : a->Address < b->Address;
}

struct ArenaSegment {
  uint64_t Base = 0;
  size_t Bytes = 0;
  uint64_t LastUse = 0; ///< tick of the last allocation from it (LRU)
  ArenaBlock* First = nullptr;
};

/// Block addresses are multiples of 256 and often of 2 MiB, which DenseMap's
/// default integer hash (key * 37) piles into a few buckets: mix the bits.
struct AddressKeyInfo {
  static uint64_t getEmptyKey() { return ~uint64_t(0); }
  static uint64_t getTombstoneKey() { return ~uint64_t(0) - 1; }
  static unsigned getHashValue(uint64_t key) {
    return static_cast<unsigned>((key * 0x9E3779B97F4A7C15ull) >> 32);
  }
  static bool isEqual(uint64_t a, uint64_t b) { return a == b; }
};

enum class GrowFailure { None, Quota, OutOfMemory };

struct ReleasedSegments {
  size_t bytes = 0;
  std::vector<std::pair<uint64_t, size_t>> ranges; ///< {base, bytes} of each segment
};

struct ArenaStats {
  size_t reserved = 0;
  size_t peak_reserved = 0;
  size_t segments = 0;
  size_t free_bytes = 0;     ///< free blocks in segments (idle or not)
  size_t largest_free = 0;   ///< the largest of them
  size_t in_use = 0;         ///< bytes in allocated blocks
};

class MemoryArena {
public:
  explicit MemoryArena(MemoryBackend& backend) : Backend(backend) {}
  /// Releases every segment (the pool is going away).
  ~MemoryArena();
  MemoryArena(const MemoryArena&) = delete;
  MemoryArena& operator=(const MemoryArena&) = delete;

  /// A cached block of exactly `bytes` (a multiple of 256) usable by work on
  /// `stream`, split from a larger free block if need be; 0 when none.
  uint64_t allocate_cached(size_t bytes, CUstream stream);
  /// Reserves a segment big enough for `bytes` (within `quota` bytes
  /// reserved in all) and allocates from it; 0 and `why` when it cannot.
  uint64_t allocate_new(size_t bytes, CUstream stream, size_t quota, GrowFailure& why);
  /// Frees a block: reusable at once on `stream`, elsewhere after an event.
  /// Returns its size; Error{Usage} for an address not allocated here.
  size_t free(uint64_t address, CUstream stream);
  /// Frees a block that no work uses any more: reusable on every stream.
  size_t free_idle(uint64_t address);
  /// Waits until every block freed so far is idle (recording one event per
  /// stream and blocking on it). Used before memory is handed back.
  void settle();
  /// `stream` has finished all its work and is going away: its free blocks
  /// become idle and the arena forgets it.
  void retire(CUstream stream);
  /// Releases idle, entirely free segments to the backend, least recently
  /// used first, until `target` bytes were released (SIZE_MAX: all of them).
  ReleasedSegments release_free_segments(size_t target);
  /// The size of the allocated block at `address`, 0 when there is none.
  size_t block_size(uint64_t address) const;

  size_t reserved() const { return Reserved.load(std::memory_order_relaxed); }
  ArenaStats stats() const;

private:
  struct StreamState {
    CUstream Stream = nullptr;
    ArenaFreeSet Free; ///< blocks freed on Stream, not yet idle
    uint64_t NextSeq = 1;
    uint64_t Completed = 0;
    std::deque<std::pair<uint64_t, BackendEvent>> Outstanding;
  };

  StreamState& stream_state(CUstream stream);
  ArenaBlock* best_fit(ArenaFreeSet& set, size_t bytes) const;
  ArenaBlock* find_fit(size_t bytes, CUstream stream);
  uint64_t take(ArenaBlock* block, size_t bytes, CUstream stream);
  void insert_free(ArenaBlock* block);
  void erase_free(ArenaBlock* block);
  ArenaBlock* merge(ArenaBlock* left, ArenaBlock* right);
  ArenaBlock* coalesce(ArenaBlock* block);
  bool poll_events();
  void retag_completed(StreamState& state);
  bool cover_other_streams(CUstream stream);
  bool cover(StreamState& state);
  ArenaBlock* new_block();
  void delete_block(ArenaBlock* block);

  MemoryBackend& Backend;
  mutable SpinLock M;
  std::atomic<size_t> Reserved{0};
  size_t PeakReserved = 0;
  uint64_t Tick = 0;
  ArenaFreeSet IdleFree;
  std::vector<std::unique_ptr<StreamState>> Streams;
  llvm::DenseMap<uint64_t, ArenaBlock*, AddressKeyInfo> Live; ///< allocated blocks by address
  std::vector<std::unique_ptr<ArenaSegment>> Segments;
  std::vector<ArenaBlock*> SpareBlocks;
};

} // namespace gpukit::rt::detail
