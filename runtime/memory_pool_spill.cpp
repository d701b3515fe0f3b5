#include "runtime/memory_pool_spill.hpp"

#include "runtime/memory_pool.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::rt::detail {

namespace {

/// Blocks until the work ordered on `stream` so far is done.
void wait_for(MemoryBackend& backend, CUstream stream) {
  BackendEvent event = backend.record(stream);
  backend.synchronize(event);
  backend.destroy(event);
}

} // namespace

SpillEntry* SpillRegistry::add(Allocation memory, CUstream stream) {
  auto* entry = new SpillEntry();
  entry->Pool = &Pool;
  entry->Bytes = memory.bytes;
  entry->Device = memory;
  entry->Uses.push_back(stream);
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
    std::lock_guard<std::mutex> lock(entry->M);
    if (entry->Spilled) {
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
  entry.Uses.assign(1, stream);
  return stream;
}

bool SpillRegistry::spill_one(SpillEntry& entry) {
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
  entry.Spilled = true;
  entry.Uses.clear();
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
      if (!entry_lock.owns_lock() || e->Pins.load(std::memory_order_acquire) > 0 || e->Spilled) {
        e = nullptr;
        continue;
      }
      if (pass == 0 && !std::all_of(e->Uses.begin(), e->Uses.end(), stream_idle))
        continue; // pending work: only in the second pass
      size_t bytes = pool_block_size(e->Bytes);
      if (spill_one(*e))
        freed += bytes;
      else
        ++no_host;
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
  entry.Spilled = false;
  entry.Uses.assign(1, stream);
  SpilledBytes.fetch_sub(entry.Bytes, std::memory_order_relaxed);
  Restores.fetch_add(1, std::memory_order_relaxed);
}

void SpillRegistry::forget_stream(CUstream stream) {
  std::lock_guard<std::mutex> lock(M);
  for (SpillEntry* e : Entries) {
    std::lock_guard<std::mutex> entry_lock(e->M);
    std::erase(e->Uses, stream);
  }
}

size_t SpillRegistry::size() const {
  std::lock_guard<std::mutex> lock(M);
  return Entries.size();
}

} // namespace gpukit::rt::detail
