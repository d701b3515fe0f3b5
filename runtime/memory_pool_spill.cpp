#include "runtime/memory_pool_spill.hpp"

#include "runtime/memory_pool.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace gpukit::rt::detail {

namespace {

/// Blocks until the work ordered on `stream` so far is done.
void wait_for(MemoryBackend& backend, CUstream stream) {
  BackendEvent event = backend.record(stream);
  backend.synchronize(event);
  backend.destroy(event);
}

} // namespace

void SpillEntry::add_use(CUstream stream) {
  if (std::find(Uses.begin(), Uses.end(), stream) != Uses.end())
    return;
  Uses.push_back(stream);
  // Appending keeps Known a prefix of Uses for concurrent readers: the slot
  // is written before the count that shows it.
  uint32_t count = KnownCount.load(std::memory_order_relaxed);
  if (count < kKnownStreams && count + 1 == Uses.size()) {
    Known[count].store(stream, std::memory_order_relaxed);
    KnownCount.store(count + 1, std::memory_order_release);
  }
}

void SpillEntry::publish_uses() {
  // Readers that loaded the old count may see old or new slots; either holds
  // only streams that are (or, for one being retired, were) users.
  KnownCount.store(0, std::memory_order_relaxed);
  uint32_t count = static_cast<uint32_t>(std::min<size_t>(Uses.size(), kKnownStreams));
  for (uint32_t i = 0; i < count; ++i)
    Known[i].store(Uses[i], std::memory_order_relaxed);
  KnownCount.store(count, std::memory_order_release);
}

SpillEntry* SpillRegistry::add(Allocation memory, CUstream stream) {
  auto* entry = new SpillEntry();
  entry->Pool = &Pool;
  entry->Registry = this;
  entry->Bytes = memory.bytes;
  entry->Device = memory;
  entry->add_use(stream);
  entry->LastUse.store(tick(), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(M);
  Entries.push_back(entry);
  return entry;
}

void SpillRegistry::remove(SpillEntry* entry) {
  {
    // Once it is off the list (under the lock a spill holds throughout), no
    // spiller can reach the entry.
    std::lock_guard<std::mutex> lock(M);
    auto it = std::find(Entries.begin(), Entries.end(), entry);
    if (it != Entries.end()) {
      *it = Entries.back();
      Entries.pop_back();
    }
  }
  {
    // No pin is left (none may outlive its handle): the state is stable.
    std::lock_guard<std::mutex> lock(entry->M);
    if (entry->State.load(std::memory_order_relaxed) == SpillState::Spilled) {
      Pool.pinned().deallocate(entry->Host);
      SpilledBytes.fetch_sub(entry->Bytes, std::memory_order_relaxed);
    } else if (entry->Device) {
      CUstream stream = order_uses(*entry);
      Pool.deallocate(entry->Device, stream);
    }
  }
  delete entry;
}

CUstream SpillRegistry::order_uses(SpillEntry& entry) {
  MemoryBackend& backend = Pool.backend();
  CUstream stream = entry.Uses.empty() ? Pool.default_stream() : entry.Uses.front();
  for (size_t i = 1; i < entry.Uses.size(); ++i) {
    BackendEvent event = backend.record(entry.Uses[i]);
    backend.wait(stream, event);
    backend.destroy(event);
  }
  if (entry.Uses.size() > 1) {
    entry.Uses.assign(1, stream);
    entry.publish_uses();
  }
  return stream;
}

bool SpillRegistry::spill_one(SpillEntry& entry) {
  // entry.M held and the state Spilling with no pin: no pin reads Device,
  // Known or Uses until the state changes again.
  PinnedBlock host = Pool.pinned().allocate(entry.Bytes);
  if (!host)
    return false;
  MemoryBackend& backend = Pool.backend();
  CUstream stream = order_uses(entry);
  try {
    backend.copy_to_host(host.data, entry.Device.address, entry.Bytes, stream);
    wait_for(backend, stream);
  } catch (...) {
    Pool.pinned().deallocate(host);
    throw;
  }
  // The copy was the last use and has finished: the block is idle.
  Pool.deallocate_idle(entry.Device);
  entry.Device = {};
  entry.Host = host;
  entry.Uses.clear();
  entry.publish_uses();
  entry.State.store(SpillState::Spilled, std::memory_order_seq_cst);
  SpilledBytes.fetch_add(entry.Bytes, std::memory_order_relaxed);
  Spills.fetch_add(1, std::memory_order_relaxed);
  return true;
}

size_t SpillRegistry::spill(size_t need) {
  std::lock_guard<std::mutex> lock(M);
  MemoryBackend& backend = Pool.backend();

  std::vector<SpillEntry*> candidates;
  size_t busy = 0;
  for (SpillEntry* e : Entries) {
    if (e->Pins.load(std::memory_order_acquire) > 0)
      ++busy;
    else
      candidates.push_back(e);
  }
  std::sort(candidates.begin(), candidates.end(), [](const SpillEntry* a, const SpillEntry* b) {
    return a->LastUse.load(std::memory_order_relaxed) < b->LastUse.load(std::memory_order_relaxed);
  });

  // Which streams still have work pending: one event each, asked once.
  std::vector<std::pair<CUstream, bool>> idle_streams;
  auto stream_idle = [&](CUstream stream) {
    for (auto [s, idle] : idle_streams)
      if (s == stream)
        return idle;
    BackendEvent event = backend.record(stream);
    bool idle = backend.query(event);
    backend.destroy(event);
    idle_streams.emplace_back(stream, idle);
    return idle;
  };

  size_t freed = 0;
  size_t no_host = 0;
  for (int pass = 0; pass < 2 && freed < need; ++pass) {
    for (SpillEntry*& e : candidates) {
      if (!e || freed >= need)
        continue;
      std::unique_lock<std::mutex> entry_lock(e->M, std::try_to_lock);
      if (!entry_lock.owns_lock() || e->Pins.load(std::memory_order_acquire) > 0 ||
          e->State.load(std::memory_order_relaxed) == SpillState::Spilled) {
        e = nullptr;
        continue;
      }
      if (pass == 0 && !std::all_of(e->Uses.begin(), e->Uses.end(), stream_idle))
        continue; // pending work: only in the second pass
      // Announce the spill, then look for pins (seq_cst both, paired with
      // pin(): see the file comment). A pin that came first wins.
      e->State.store(SpillState::Spilling, std::memory_order_seq_cst);
      if (e->Pins.load(std::memory_order_seq_cst) > 0) {
        e->State.store(SpillState::Resident, std::memory_order_seq_cst);
        e = nullptr;
        continue;
      }
      size_t bytes = pool_block_size(e->Bytes);
      bool spilled = false;
      try {
        spilled = spill_one(*e);
      } catch (...) {
        // Still resident, with Uses and Known as order_uses left them.
        e->State.store(SpillState::Resident, std::memory_order_seq_cst);
        throw;
      }
      if (spilled) {
        freed += bytes;
      } else {
        e->State.store(SpillState::Resident, std::memory_order_seq_cst);
        ++no_host;
      }
      e = nullptr;
    }
  }
  LastBusy.store(busy, std::memory_order_relaxed);
  LastNoHost.store(no_host, std::memory_order_relaxed);
  return freed;
}

void SpillRegistry::restore(SpillEntry& entry, CUstream stream) {
  // May spill other entries; never this one, which the caller has pinned.
  Allocation device = Pool.allocate(entry.Bytes, stream);
  MemoryBackend& backend = Pool.backend();
  try {
    backend.copy_to_device(device.address, entry.Host.data, entry.Bytes, stream);
    // The host copy is released below: the copy must have read it.
    wait_for(backend, stream);
  } catch (...) {
    Pool.deallocate(device, stream);
    throw;
  }
  Pool.pinned().deallocate(entry.Host);
  entry.Host = {};
  entry.Device = device;
  entry.Uses.assign(1, stream);
  entry.publish_uses();
  // Publishes Device and Known to pins that see Resident without the lock.
  entry.State.store(SpillState::Resident, std::memory_order_seq_cst);
  SpilledBytes.fetch_sub(entry.Bytes, std::memory_order_relaxed);
  Restores.fetch_add(1, std::memory_order_relaxed);
}

void SpillRegistry::forget_stream(CUstream stream) {
  // Never waits for an entry's lock while holding M: a pin holds its entry's
  // lock while restoring, and the restore may need M to spill others. Busy
  // entries are retried with M released in between.
  std::unique_lock<std::mutex> lock(M);
  std::vector<SpillEntry*> pending = Entries;
  for (;;) {
    std::vector<SpillEntry*> busy;
    for (SpillEntry* e : pending) {
      std::unique_lock<std::mutex> entry_lock(e->M, std::try_to_lock);
      if (!entry_lock.owns_lock()) {
        busy.push_back(e);
        continue;
      }
      if (std::erase(e->Uses, stream) > 0)
        e->publish_uses();
    }
    if (busy.empty())
      return;
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
    // Entries removed meanwhile are off the list (and maybe deleted). A new
    // one at a freed address gets the erase too, harmlessly: no handle uses
    // a stream that is being retired.
    std::erase_if(busy, [&](SpillEntry* e) {
      return std::find(Entries.begin(), Entries.end(), e) == Entries.end();
    });
    pending = std::move(busy);
  }
}

size_t SpillRegistry::size() const {
  std::lock_guard<std::mutex> lock(M);
  return Entries.size();
}

} // namespace gpukit::rt::detail
