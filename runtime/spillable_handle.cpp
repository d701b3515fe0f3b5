#include "runtime/spillable_handle.hpp"

#include "runtime/memory_pool.hpp"
#include "runtime/memory_pool_spill.hpp"

#include <algorithm>
#include <utility>

namespace gpukit::rt {

SpillableHandle& SpillableHandle::operator=(SpillableHandle&& other) noexcept {
  if (this != &other) {
    reset();
    Entry = std::exchange(other.Entry, nullptr);
  }
  return *this;
}

void SpillableHandle::reset() {
  if (!Entry)
    return;
  detail::SpillEntry* entry = std::exchange(Entry, nullptr);
  entry->Pool->Spills->remove(entry);
}

SpillableHandle::Pin SpillableHandle::pin(CUstream stream) {
  detail::SpillEntry& entry = *Entry;
  MemoryPool& pool = *entry.Pool;
  stream = pool.resolve(stream);
  // Pinned before the lock: a spiller never waits on (or takes) this entry.
  entry.Pins.fetch_add(1, std::memory_order_acq_rel);
  try {
    std::lock_guard<std::mutex> lock(entry.M);
    if (entry.Spilled)
      pool.Spills->restore(entry, stream);
    entry.LastUse.store(pool.Spills->tick(), std::memory_order_relaxed);
    if (std::find(entry.Uses.begin(), entry.Uses.end(), stream) == entry.Uses.end())
      entry.Uses.push_back(stream);
    return Pin(&entry, stream, entry.Device);
  } catch (...) {
    entry.Pins.fetch_sub(1, std::memory_order_acq_rel);
    throw;
  }
}

bool SpillableHandle::spilled() const {
  std::lock_guard<std::mutex> lock(Entry->M);
  return Entry->Spilled;
}

size_t SpillableHandle::bytes() const { return Entry ? Entry->Bytes : 0; }

void SpillableHandle::Pin::swap(Pin& other) noexcept {
  std::swap(Entry, other.Entry);
  std::swap(Stream, other.Stream);
  std::swap(Memory, other.Memory);
}

SpillableHandle::Pin::~Pin() {
  if (!Entry)
    return;
  Entry->LastUse.store(Entry->Pool->Spills->tick(), std::memory_order_relaxed);
  Entry->Pins.fetch_sub(1, std::memory_order_acq_rel);
}

} // namespace gpukit::rt
