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
  stream = entry.Pool->resolve(stream);
  // Pinned before looking at the state (seq_cst both, paired with the
  // spiller's store of Spilling and load of Pins: memory_pool_spill.hpp), and
  // before the lock on the slow path: a spiller never waits on (or takes)
  // this entry.
  entry.Pins.fetch_add(1, std::memory_order_seq_cst);
  if (entry.State.load(std::memory_order_seq_cst) == detail::SpillState::Resident &&
      entry.knows(stream)) [[likely]] {
    // Resident and no spill can start before the pin dies; the stream is
    // among the users a spill or free waits for. LastUse is left to the
    // unpin: a spiller ranks only unpinned entries, whose last unpin set it.
    return Pin(&entry, stream, entry.Device);
  }
  return pin_locked(entry, stream);
}

SpillableHandle::Pin SpillableHandle::pin_locked(detail::SpillEntry& entry, CUstream stream) {
  try {
    std::lock_guard<std::mutex> lock(entry.M);
    entry.Registry->count_locked_pin();
    // Under the lock the state is Resident or Spilled: a spiller holds the
    // lock while Spilling.
    if (entry.State.load(std::memory_order_relaxed) == detail::SpillState::Spilled)
      entry.Registry->restore(entry, stream);
    else
      entry.add_use(stream);
    entry.LastUse.store(entry.Registry->tick(), std::memory_order_relaxed);
    return Pin(&entry, stream, entry.Device);
  } catch (...) {
    entry.Pins.fetch_sub(1, std::memory_order_release);
    throw;
  }
}

bool SpillableHandle::spilled() const {
  // Under the lock: never caught in the middle of a spill.
  std::lock_guard<std::mutex> lock(Entry->M);
  return Entry->State.load(std::memory_order_relaxed) == detail::SpillState::Spilled;
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
  Entry->LastUse.store(Entry->Registry->tick(), std::memory_order_relaxed);
  // Release: what the holder did with the memory happens before a spill
  // that sees the count drop.
  Entry->Pins.fetch_sub(1, std::memory_order_release);
}

} // namespace gpukit::rt
