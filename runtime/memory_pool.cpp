#include "runtime/memory_pool.hpp"

#include "runtime/byte_size.hpp"
#include "runtime/memory_backend_driver.hpp"
#include "runtime/memory_backend_host.hpp"
#include "runtime/memory_pool_arena.hpp"
#include "runtime/memory_pool_bins.hpp"
#include "runtime/memory_pool_spill.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gpukit::rt {

namespace {

bool debug_from_environment() {
  const char* value = std::getenv("GPUKIT_POOL_DEBUG");
  return value && *value && std::strcmp(value, "0") != 0;
}

std::string format_quota(size_t quota) { return quota == SIZE_MAX ? "none" : format_bytes(quota); }

} // namespace

std::string MemoryPoolStats::summary() const {
  return fmt::format("allocated {} (peak {}), reserved {} (peak {}) in {} segments, cached {} "
                     "(largest free block {}, fragmentation {:.1f}%), spilled {}, quota {}; "
                     "{} hits, {} misses, {} evictions, {} spills, {} restores",
                     format_bytes(allocated), format_bytes(peak_allocated), format_bytes(reserved),
                     format_bytes(peak_reserved), segments, format_bytes(cached),
                     format_bytes(largest_free), fragmentation * 100, format_bytes(spilled),
                     format_quota(quota), hits, misses, evictions, spills, restores);
}

MemoryPool::MemoryPool(std::unique_ptr<MemoryBackend> backend, MemoryPoolOptions options)
    : Backend(std::move(backend)), Opts(options), Quota(options.quota ? options.quota : SIZE_MAX) {
  Opts.debug = Opts.debug || debug_from_environment();
  Pinned = std::make_unique<PinnedHostPool>(*Backend);
  Arena = std::make_unique<detail::MemoryArena>(*Backend);
  Bins = std::make_unique<detail::SmallBin[]>(kNumSmallClasses);
  for (size_t c = 0; c < kNumSmallClasses; ++c)
    Bins[c].init(*Backend, small_class_size(c));
  Spills = std::make_unique<detail::SpillRegistry>(*this);
}

MemoryPool::~MemoryPool() {
  // Bins hold events on the backend; the arena holds the segments. Both go
  // before the backend (declared first, destroyed last).
  Spills.reset();
  Bins.reset();
  Arena.reset();
  Pinned.reset();
}

size_t MemoryPool::allocated_now() const {
  size_t bytes = LargeAllocated.load(std::memory_order_relaxed);
  for (size_t c = 0; c < kNumSmallClasses; ++c)
    bytes += Bins[c].in_use_bytes();
  return bytes;
}

void MemoryPool::sample_peak() {
  size_t now = allocated_now();
  size_t peak = PeakAllocated.load(std::memory_order_relaxed);
  while (now > peak && !PeakAllocated.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

Allocation MemoryPool::allocate(size_t bytes, CUstream stream) {
  if (bytes == 0)
    return {};
  stream = resolve(stream);
  if (bytes > kSmallLimit)
    return allocate_large(bytes, stream);
  // The hot path: one size class, its lock, a vector pop.
  size_t cls = small_class_of(bytes);
  uint64_t address = Bins[cls].allocate(stream);
  if (!address) [[unlikely]]
    address = allocate_small_slow(cls, bytes, stream);
  Allocation allocation{address, bytes};
  if (Opts.debug) [[unlikely]]
    debug_on_allocate(allocation, Bins[cls].block_size(), stream);
  return allocation;
}

Allocation MemoryPool::allocate_large(size_t bytes, CUstream stream) {
  if (bytes > SIZE_MAX / 2)
    throw_out_of_memory(bytes, true);
  size_t block = round_large(bytes);
  uint64_t address = Arena->allocate_cached(block, stream);
  if (address) {
    LargeHits.fetch_add(1, std::memory_order_relaxed);
    LargeAllocated.fetch_add(block, std::memory_order_relaxed);
  } else {
    Misses.fetch_add(1, std::memory_order_relaxed);
    address = obtain(block, bytes, stream);
    LargeAllocated.fetch_add(block, std::memory_order_relaxed);
    sample_peak();
  }
  Allocation allocation{address, bytes};
  if (Opts.debug) [[unlikely]]
    debug_on_allocate(allocation, block, stream);
  return allocation;
}

uint64_t MemoryPool::allocate_small_slow(size_t cls, size_t bytes, CUstream stream) {
  Misses.fetch_add(1, std::memory_order_relaxed);
  size_t block = small_class_size(cls);
  size_t blocks = small_class_slab_blocks(cls);
  // A whole slab if cached memory or quota headroom allows, else one block.
  uint64_t base = Arena->allocate_cached(blocks * block, stream);
  if (!base) {
    detail::GrowFailure why;
    base = Arena->allocate_new(blocks * block, stream, quota(), why);
  }
  if (!base) {
    blocks = 1;
    base = obtain(block, bytes, stream);
  }
  uint64_t address = Bins[cls].add_slab(base, blocks, stream);
  sample_peak();
  return address;
}

uint64_t MemoryPool::obtain(size_t bytes, size_t requested, CUstream stream) {
  bool settled = false;
  for (;;) {
    if (uint64_t address = Arena->allocate_cached(bytes, stream))
      return address;
    detail::GrowFailure why;
    if (uint64_t address = Arena->allocate_new(bytes, stream, quota(), why))
      return address;
    if (bytes > quota())
      throw_out_of_memory(requested, true);
    // Pressure: give back cached memory first, then spill, then fail.
    if (release_cached(bytes))
      continue;
    // release_cached waited for every stream: blocks freed on other streams
    // are usable now even where no segment could be released. Retry once.
    if (!settled) {
      settled = true;
      continue;
    }
    if (Spills->spill(bytes) > 0) {
      settled = false;
      continue;
    }
    throw_out_of_memory(requested, why == detail::GrowFailure::Quota);
  }
}

bool MemoryPool::release_cached(size_t need) {
  for (size_t c = 0; c < kNumSmallClasses; ++c)
    for (auto [base, bytes] : Bins[c].take_free_slabs(/*settle=*/true))
      Arena->free_idle(base);
  Arena->settle();
  // When the quota stopped the request, enough to bring reserved + request
  // under it; when the backend did, the request's size.
  size_t reserved = Arena->reserved();
  size_t limit = quota();
  size_t target = reserved + need > limit ? reserved + need - limit : need;
  detail::ReleasedSegments released = Arena->release_free_segments(target);
  Evictions.fetch_add(released.ranges.size(), std::memory_order_relaxed);
  for (auto [base, bytes] : released.ranges)
    debug_forget(base, bytes);
  return released.bytes > 0;
}

void MemoryPool::deallocate(Allocation allocation, CUstream stream) {
  if (!allocation)
    return;
  stream = resolve(stream);
  if (Opts.debug) [[unlikely]]
    debug_on_free(allocation, pool_block_size(allocation.bytes), stream);
  if (allocation.bytes <= kSmallLimit) [[likely]] {
    Bins[small_class_of(allocation.bytes)].free(allocation.address, stream);
    return;
  }
  size_t block = Arena->free(allocation.address, stream);
  LargeAllocated.fetch_sub(block, std::memory_order_relaxed);
}

void MemoryPool::deallocate_idle(Allocation allocation) {
  if (Opts.debug)
    debug_on_free(allocation, pool_block_size(allocation.bytes), Opts.default_stream);
  if (allocation.bytes <= kSmallLimit) {
    Bins[small_class_of(allocation.bytes)].free_idle(allocation.address);
    return;
  }
  size_t block = Arena->free_idle(allocation.address);
  LargeAllocated.fetch_sub(block, std::memory_order_relaxed);
}

SpillableHandle MemoryPool::allocate_spillable(size_t bytes, CUstream stream) {
  stream = resolve(stream);
  Allocation memory = allocate(std::max<size_t>(bytes, 1), stream);
  memory.bytes = std::max<size_t>(bytes, 1);
  return SpillableHandle(Spills->add(memory, stream));
}

size_t MemoryPool::trim() {
  for (size_t c = 0; c < kNumSmallClasses; ++c)
    for (auto [base, bytes] : Bins[c].take_free_slabs(/*settle=*/true))
      Arena->free_idle(base);
  Arena->settle();
  detail::ReleasedSegments released = Arena->release_free_segments(SIZE_MAX);
  for (auto [base, bytes] : released.ranges)
    debug_forget(base, bytes);
  Pinned->trim();
  Trims.fetch_add(1, std::memory_order_relaxed);
  return released.bytes;
}

void MemoryPool::retire_stream(CUstream stream) {
  if (!stream)
    return;
  Backend->synchronize_stream(stream);
  for (size_t c = 0; c < kNumSmallClasses; ++c)
    Bins[c].retire(stream);
  Arena->retire(stream);
  Spills->forget_stream(stream);
}

MemoryPoolStats MemoryPool::stats() const {
  MemoryPoolStats s;
  detail::ArenaStats arena = Arena->stats();
  s.allocated = allocated_now();
  s.peak_allocated = std::max(s.allocated, PeakAllocated.load(std::memory_order_relaxed));
  s.reserved = arena.reserved;
  s.peak_reserved = arena.peak_reserved;
  s.segments = arena.segments;
  s.cached = s.reserved > s.allocated ? s.reserved - s.allocated : 0;
  // The arena's free blocks are contiguous runs; blocks cached in the small
  // bins count as cached but never as one large free block.
  s.largest_free = arena.largest_free;
  s.fragmentation = s.cached ? 1.0 - static_cast<double>(s.largest_free) / s.cached : 0.0;
  s.spilled = Spills->spilled_bytes();
  s.quota = quota();
  s.hits = LargeHits.load(std::memory_order_relaxed);
  for (size_t c = 0; c < kNumSmallClasses; ++c)
    s.hits += Bins[c].hits();
  s.misses = Misses.load(std::memory_order_relaxed);
  s.evictions = Evictions.load(std::memory_order_relaxed);
  s.spills = Spills->spills();
  s.restores = Spills->restores();
  s.locked_pins = Spills->locked_pins();
  s.trims = Trims.load(std::memory_order_relaxed);
  return s;
}

void MemoryPool::throw_out_of_memory(size_t requested, bool quota_bound) const {
  MemoryPoolStats s = stats();
  std::string why;
  if (requested > s.quota)
    why = "; the request alone exceeds the quota";
  else if (size_t busy = Spills->last_busy())
    why = fmt::format("; {} spillable array{} pinned by pending launches could not be spilled",
                      busy, busy == 1 ? "" : "s");
  if (size_t no_host = Spills->last_no_host_memory())
    why += fmt::format("; {} array{} could not be spilled for lack of pinned host memory", no_host,
                       no_host == 1 ? "" : "s");
  std::string fix = quota_bound ? "raise the pool's quota, free arrays that are no longer needed, "
                                  "or work on smaller pieces"
                                : "free arrays that are no longer needed, or work on smaller pieces";
  throw Error(ErrorKind::OutOfMemory,
              fmt::format("out of {} memory: requested {}; in use {}, cached {}, spilled {}, quota "
                          "{}{}; {}",
                          Backend->memory_name(), format_bytes(requested), format_bytes(s.allocated),
                          format_bytes(s.cached), format_bytes(s.spilled), format_quota(s.quota),
                          why, fix));
}

// Debug mode -----------------------------------------------------------------

void MemoryPool::debug_on_free(Allocation allocation, size_t block, CUstream stream) {
  {
    std::lock_guard<std::mutex> lock(DebugMutex);
    auto it = DebugLive.find(allocation.address);
    if (it == DebugLive.end())
      throw Error(ErrorKind::Usage,
                  fmt::format("memory pool: deallocate of {:#x} ({} bytes), which this pool did not "
                              "hand out or which was already freed (double free)",
                              allocation.address, allocation.bytes));
    if (it->second != allocation.bytes)
      throw Error(ErrorKind::Usage,
                  fmt::format("memory pool: deallocate of {:#x} says {} bytes; it was allocated with "
                              "{} bytes",
                              allocation.address, allocation.bytes, it->second));
    DebugLive.erase(it);
    uint64_t begin = allocation.address, end = allocation.address + block;
    // Merge with touching poisoned ranges so the map stays small.
    auto next = Poisoned.lower_bound(begin);
    if (next != Poisoned.begin() && std::prev(next)->second == begin) {
      begin = std::prev(next)->first;
      Poisoned.erase(std::prev(next));
    }
    next = Poisoned.find(end);
    if (next != Poisoned.end()) {
      end = next->second;
      Poisoned.erase(next);
    }
    Poisoned[begin] = end;
  }
  Backend->fill(allocation.address, block, Opts.debug_pattern, stream);
}

void MemoryPool::debug_forget(uint64_t base, size_t bytes) {
  if (!Opts.debug)
    return;
  std::lock_guard<std::mutex> lock(DebugMutex);
  uint64_t end = base + bytes;
  auto it = Poisoned.upper_bound(base);
  if (it != Poisoned.begin() && std::prev(it)->second > base)
    --it;
  while (it != Poisoned.end() && it->first < end) {
    auto [b, e] = *it;
    it = Poisoned.erase(it);
    if (b < base)
      Poisoned[b] = base;
    if (e > end)
      Poisoned[end] = e;
  }
}

void MemoryPool::debug_on_allocate(Allocation allocation, size_t block, CUstream stream) {
  uint64_t begin = allocation.address, end = allocation.address + block;
  std::vector<std::pair<uint64_t, uint64_t>> checks;
  {
    std::lock_guard<std::mutex> lock(DebugMutex);
    DebugLive[allocation.address] = allocation.bytes;
    auto it = Poisoned.upper_bound(begin);
    if (it != Poisoned.begin() && std::prev(it)->second > begin)
      --it;
    for (; it != Poisoned.end() && it->first < end; ++it)
      checks.emplace_back(std::max(it->first, begin), std::min(it->second, end));
  }
  debug_forget(begin, block);
  if (checks.empty())
    return;
  // The fill was ordered on the freeing stream, which is `stream` or known
  // complete: reading on `stream` sees it.
  std::vector<uint8_t> bytes;
  for (auto [from, to] : checks) {
    bytes.resize(to - from);
    Backend->copy_to_host(bytes.data(), from, bytes.size(), stream);
    BackendEvent event = Backend->record(stream);
    Backend->synchronize(event);
    Backend->destroy(event);
    auto bad = std::find_if(bytes.begin(), bytes.end(),
                            [&](uint8_t b) { return b != Opts.debug_pattern; });
    if (bad == bytes.end())
      continue;
    uint64_t where = from + static_cast<uint64_t>(bad - bytes.begin());
    deallocate(allocation, stream);
    throw Error(ErrorKind::Usage,
                fmt::format("memory pool: use after free: {:#x} (byte {} of a {}-byte block at "
                            "{:#x}) was written after the block was freed: it holds {:#04x}, not "
                            "the free pattern {:#04x}; a kernel or copy still used freed memory",
                            where, where - allocation.address, block, allocation.address,
                            static_cast<unsigned>(*bad), static_cast<unsigned>(Opts.debug_pattern)));
  }
}

// Factories ------------------------------------------------------------------

std::unique_ptr<MemoryPool> make_device_pool(const DriverApi& api, CUstream stream, size_t quota,
                                             CUcontext context) {
  MemoryPoolOptions options;
  options.quota = quota;
  options.default_stream = stream;
  return std::make_unique<MemoryPool>(std::make_unique<DriverMemoryBackend>(api, context), options);
}

std::unique_ptr<MemoryPool> make_host_pool(size_t quota, MemoryPoolOptions options) {
  if (quota)
    options.quota = quota;
  return std::make_unique<MemoryPool>(std::make_unique<HostMemoryBackend>(), options);
}

} // namespace gpukit::rt
