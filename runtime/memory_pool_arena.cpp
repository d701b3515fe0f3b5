#include "runtime/memory_pool_arena.hpp"

#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::rt::detail {

namespace {

/// Segment sizes: small needs share 2 MiB segments and medium ones 20 MiB
/// segments, so slabs and mid-sized arrays do not each cost a cuMemAlloc;
/// a large need gets a segment of its own, rounded to the driver's 2 MiB
/// page (PyTorch's caching allocator made the same choice).
constexpr size_t kSegmentGranule = 2 * MiB;

size_t preferred_segment(size_t bytes) {
  if (bytes <= 1 * MiB)
    return 2 * MiB;
  if (bytes <= 10 * MiB)
    return 20 * MiB;
  return align_up(bytes, kSegmentGranule);
}

} // namespace

MemoryArena::~MemoryArena() {
  for (auto& state : Streams)
    for (auto& [seq, event] : state->Outstanding)
      Backend.destroy(event);
  for (auto& segment : Segments) {
    for (ArenaBlock* b = segment->First; b;) {
      ArenaBlock* next = b->Next;
      delete b;
      b = next;
    }
    // A destructor must not throw; at process exit the driver may be gone.
    try {
      Backend.release(segment->Base, segment->Bytes);
    } catch (...) {
    }
  }
  for (ArenaBlock* b : SpareBlocks)
    delete b;
}

ArenaBlock* MemoryArena::new_block() {
  if (SpareBlocks.empty())
    return new ArenaBlock();
  ArenaBlock* b = SpareBlocks.back();
  SpareBlocks.pop_back();
  ArenaFreeSet::node_type node = std::move(b->Node); // still b's node: keep it
  *b = ArenaBlock();
  b->Node = std::move(node);
  return b;
}

void MemoryArena::delete_block(ArenaBlock* block) { SpareBlocks.push_back(block); }

MemoryArena::StreamState& MemoryArena::stream_state(CUstream stream) {
  for (auto& state : Streams)
    if (state->Stream == stream)
      return *state;
  Streams.push_back(std::make_unique<StreamState>());
  Streams.back()->Stream = stream;
  return *Streams.back();
}

void MemoryArena::insert_free(ArenaBlock* block) {
  ArenaFreeSet& set = block->Idle ? IdleFree : stream_state(block->Stream).Free;
  if (block->Node.empty())
    set.insert(block);
  else
    set.insert(std::move(block->Node));
}

void MemoryArena::erase_free(ArenaBlock* block) {
  ArenaFreeSet& set = block->Idle ? IdleFree : stream_state(block->Stream).Free;
  block->Node = set.extract(block);
}

ArenaBlock* MemoryArena::best_fit(ArenaFreeSet& set, size_t bytes) const {
  ArenaBlock key;
  key.Size = bytes;
  key.Address = 0;
  auto it = set.lower_bound(&key);
  return it == set.end() ? nullptr : *it;
}

ArenaBlock* MemoryArena::find_fit(size_t bytes, CUstream stream) {
  ArenaBlock* own = best_fit(stream_state(stream).Free, bytes);
  ArenaBlock* idle = best_fit(IdleFree, bytes);
  if (!own)
    return idle;
  if (!idle)
    return own;
  // The tighter fit; on a tie the stream's own block, keeping idle ones for
  // the streams that can use nothing else.
  return idle->Size < own->Size ? idle : own;
}

uint64_t MemoryArena::take(ArenaBlock* block, size_t bytes, CUstream stream) {
  erase_free(block);
  if (block->Size > bytes) {
    ArenaBlock* rest = new_block();
    rest->Address = block->Address + bytes;
    rest->Size = block->Size - bytes;
    rest->Segment = block->Segment;
    rest->Prev = block;
    rest->Next = block->Next;
    if (block->Next)
      block->Next->Prev = rest;
    block->Next = rest;
    rest->Idle = block->Idle;
    rest->Stream = block->Stream;
    rest->Cover = block->Cover;
    insert_free(rest);
    block->Size = bytes;
  }
  block->Allocated = true;
  block->Idle = false;
  block->Stream = nullptr;
  block->Cover = 0;
  block->Segment->LastUse = ++Tick;
  Live.try_emplace(block->Address, block);
  return block->Address;
}

ArenaBlock* MemoryArena::merge(ArenaBlock* left, ArenaBlock* right) {
  left->Size += right->Size;
  left->Next = right->Next;
  if (right->Next)
    right->Next->Prev = left;
  delete_block(right);
  return left;
}

/// Merges `block` (free, in no set) with free neighbours it may absorb. An
/// idle block merges only with idle neighbours: merging it into a stream's
/// block would hide idle memory from the other streams. A block freed on a
/// stream absorbs idle neighbours and its own stream's: the stream may use
/// all of it at once, so single-stream use coalesces fully, and other
/// streams get the memory back after the next event on that stream.
ArenaBlock* MemoryArena::coalesce(ArenaBlock* block) {
  auto compatible = [&](const ArenaBlock* n) {
    if (!n || n->Allocated)
      return false;
    if (block->Idle)
      return n->Idle;
    return n->Idle || n->Stream == block->Stream;
  };
  // Events on one stream complete in order, so the later batch covers
  // both; an idle part needs no cover.
  auto merged_cover = [](const ArenaBlock* a, const ArenaBlock* b) -> uint64_t {
    if (a->Idle)
      return b->Cover;
    if (b->Idle)
      return a->Cover;
    return a->Cover && b->Cover ? std::max(a->Cover, b->Cover) : 0;
  };
  auto absorb = [&](ArenaBlock* left, ArenaBlock* right) {
    bool idle = left->Idle && right->Idle;
    CUstream stream = left->Idle ? right->Stream : left->Stream;
    uint64_t cover = idle ? 0 : merged_cover(left, right);
    ArenaBlock* merged = merge(left, right);
    merged->Idle = idle;
    merged->Stream = idle ? nullptr : stream;
    merged->Cover = cover;
    return merged;
  };
  if (compatible(block->Prev)) {
    ArenaBlock* prev = block->Prev;
    erase_free(prev);
    block = absorb(prev, block);
  }
  if (compatible(block->Next)) {
    ArenaBlock* next = block->Next;
    erase_free(next);
    block = absorb(block, next);
  }
  return block;
}

uint64_t MemoryArena::allocate_cached(size_t bytes, CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  ArenaBlock* block = find_fit(bytes, stream);
  if (!block && poll_events())
    block = find_fit(bytes, stream);
  if (!block && cover_other_streams(stream) && poll_events())
    block = find_fit(bytes, stream);
  return block ? take(block, bytes, stream) : 0;
}

uint64_t MemoryArena::allocate_new(size_t bytes, CUstream stream, size_t quota, GrowFailure& why) {
  why = GrowFailure::None;
  size_t segment = 0;
  size_t current = Reserved.load(std::memory_order_relaxed);
  do {
    if (bytes > quota || current > quota - bytes) {
      why = GrowFailure::Quota;
      return 0;
    }
    size_t room = quota - current;
    segment = preferred_segment(bytes);
    if (segment > room)
      segment = std::max(bytes, room / kSegmentGranule * kSegmentGranule);
  } while (!Reserved.compare_exchange_weak(current, current + segment, std::memory_order_relaxed));

  uint64_t base = Backend.reserve(segment);
  if (!base && segment > bytes) {
    // The device may still hold the request itself.
    Reserved.fetch_sub(segment - bytes, std::memory_order_relaxed);
    segment = bytes;
    base = Backend.reserve(segment);
  }
  if (!base) {
    Reserved.fetch_sub(segment, std::memory_order_relaxed);
    why = GrowFailure::OutOfMemory;
    return 0;
  }

  std::lock_guard<SpinLock> lock(M);
  PeakReserved = std::max(PeakReserved, Reserved.load(std::memory_order_relaxed));
  auto owned = std::make_unique<ArenaSegment>();
  ArenaSegment* seg = owned.get();
  seg->Base = base;
  seg->Bytes = segment;
  Segments.push_back(std::move(owned));
  ArenaBlock* block = new_block();
  block->Address = base;
  block->Size = segment;
  block->Segment = seg;
  block->Idle = true;
  seg->First = block;
  insert_free(block);
  return take(block, bytes, stream);
}

size_t MemoryArena::free(uint64_t address, CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  auto it = Live.find(address);
  if (it == Live.end())
    throw Error(ErrorKind::Usage,
                fmt::format("memory pool: deallocate of {:#x}, which is not allocated (freed twice, "
                            "or from another allocator)",
                            address));
  ArenaBlock* block = it->second;
  Live.erase(it);
  size_t size = block->Size;
  block->Allocated = false;
  block->Idle = false;
  block->Stream = stream;
  block->Cover = 0;
  insert_free(coalesce(block));
  return size;
}

size_t MemoryArena::free_idle(uint64_t address) {
  std::lock_guard<SpinLock> lock(M);
  auto it = Live.find(address);
  if (it == Live.end())
    throw Error(ErrorKind::Internal,
                fmt::format("memory pool: idle free of {:#x}, which is not allocated", address));
  ArenaBlock* block = it->second;
  Live.erase(it);
  size_t size = block->Size;
  block->Allocated = false;
  block->Idle = true;
  block->Stream = nullptr;
  block->Cover = 0;
  insert_free(coalesce(block));
  return size;
}

bool MemoryArena::cover(StreamState& state) {
  bool uncovered = std::any_of(state.Free.begin(), state.Free.end(),
                               [](const ArenaBlock* b) { return b->Cover == 0; });
  if (!uncovered)
    return false;
  uint64_t seq = state.NextSeq++;
  BackendEvent event = Backend.record(state.Stream);
  for (ArenaBlock* b : state.Free)
    if (b->Cover == 0)
      b->Cover = seq;
  state.Outstanding.emplace_back(seq, event);
  return true;
}

bool MemoryArena::cover_other_streams(CUstream stream) {
  bool recorded = false;
  for (auto& state : Streams)
    if (state->Stream != stream && !state->Free.empty())
      recorded |= cover(*state);
  return recorded;
}

bool MemoryArena::poll_events() {
  bool changed = false;
  for (auto& state : Streams) {
    uint64_t before = state->Completed;
    while (!state->Outstanding.empty() && Backend.query(state->Outstanding.front().second)) {
      state->Completed = state->Outstanding.front().first;
      Backend.destroy(state->Outstanding.front().second);
      state->Outstanding.pop_front();
    }
    if (state->Completed != before) {
      retag_completed(*state);
      changed = true;
    }
  }
  return changed;
}

void MemoryArena::retag_completed(StreamState& state) {
  // Events known complete by other means (settle) need no query any more.
  while (!state.Outstanding.empty() && state.Outstanding.front().first <= state.Completed) {
    Backend.destroy(state.Outstanding.front().second);
    state.Outstanding.pop_front();
  }
  std::vector<ArenaBlock*> ready;
  for (ArenaBlock* b : state.Free)
    if (b->Cover != 0 && b->Cover <= state.Completed)
      ready.push_back(b);
  std::sort(ready.begin(), ready.end(),
            [](const ArenaBlock* a, const ArenaBlock* b) { return a->Address < b->Address; });
  // In address order, each block merges only into idle neighbours, which
  // are never later entries of `ready`, so no entry is merged away.
  for (ArenaBlock* b : ready) {
    erase_free(b);
    b->Idle = true;
    b->Stream = nullptr;
    b->Cover = 0;
    insert_free(coalesce(b));
  }
}

void MemoryArena::settle() {
  struct Wait {
    StreamState* State;
    uint64_t Seq;
    BackendEvent Own;
  };
  std::vector<Wait> waits;
  {
    std::lock_guard<SpinLock> lock(M);
    for (auto& state : Streams) {
      if (state->Free.empty())
        continue;
      cover(*state);
      uint64_t seq = state->NextSeq - 1;
      if (seq > state->Completed)
        // An event of our own, recorded after the batch's: the batch's may
        // be destroyed by a concurrent poll while we block outside the lock.
        waits.push_back({state.get(), seq, Backend.record(state->Stream)});
    }
  }
  for (const Wait& w : waits) {
    Backend.synchronize(w.Own);
    Backend.destroy(w.Own);
  }
  std::lock_guard<SpinLock> lock(M);
  for (const Wait& w : waits) {
    w.State->Completed = std::max(w.State->Completed, w.Seq);
    retag_completed(*w.State);
  }
}

void MemoryArena::retire(CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  auto it = std::find_if(Streams.begin(), Streams.end(),
                         [&](const auto& state) { return state->Stream == stream; });
  if (it == Streams.end())
    return;
  StreamState& state = **it;
  // Everything freed on the stream is done: one batch that has completed.
  uint64_t seq = state.NextSeq++;
  for (ArenaBlock* b : state.Free)
    b->Cover = seq;
  state.Completed = seq;
  retag_completed(state);
  Streams.erase(it);
}

ReleasedSegments MemoryArena::release_free_segments(size_t target) {
  std::vector<std::unique_ptr<ArenaSegment>> victims;
  {
    std::lock_guard<SpinLock> lock(M);
    std::vector<ArenaSegment*> candidates;
    for (auto& segment : Segments) {
      const ArenaBlock* first = segment->First;
      if (!first->Allocated && first->Idle && !first->Next)
        candidates.push_back(segment.get());
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const ArenaSegment* a, const ArenaSegment* b) { return a->LastUse < b->LastUse; });
    size_t chosen = 0;
    for (ArenaSegment* segment : candidates) {
      if (chosen >= target)
        break;
      chosen += segment->Bytes;
      erase_free(segment->First);
      delete_block(segment->First);
      auto it = std::find_if(Segments.begin(), Segments.end(),
                             [&](const auto& s) { return s.get() == segment; });
      victims.push_back(std::move(*it));
      Segments.erase(it);
    }
  }
  ReleasedSegments released;
  for (auto& segment : victims) {
    Backend.release(segment->Base, segment->Bytes);
    Reserved.fetch_sub(segment->Bytes, std::memory_order_relaxed);
    released.bytes += segment->Bytes;
    released.ranges.emplace_back(segment->Base, segment->Bytes);
  }
  return released;
}

size_t MemoryArena::block_size(uint64_t address) const {
  std::lock_guard<SpinLock> lock(M);
  auto it = Live.find(address);
  return it == Live.end() ? 0 : it->second->Size;
}

ArenaStats MemoryArena::stats() const {
  std::lock_guard<SpinLock> lock(M);
  ArenaStats s;
  s.reserved = Reserved.load(std::memory_order_relaxed);
  s.peak_reserved = std::max(PeakReserved, s.reserved);
  s.segments = Segments.size();
  auto count = [&](const ArenaFreeSet& set) {
    for (const ArenaBlock* b : set) {
      s.free_bytes += b->Size;
      s.largest_free = std::max(s.largest_free, b->Size);
    }
  };
  count(IdleFree);
  for (const auto& state : Streams)
    count(state->Free);
  for (const auto& [address, block] : Live)
    s.in_use += block->Size;
  return s;
}

} // namespace gpukit::rt::detail
