#include "runtime/memory_pool_bins.hpp"

#include <algorithm>
#include <unordered_map>

namespace gpukit::rt::detail {

SmallBin::~SmallBin() {
  for (Pending& p : PendingLists)
    Backend->destroy(p.Event);
}

uint64_t SmallBin::allocate(CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  for (Fresh& f : FreshLists) {
    if (f.Stream != stream)
      continue;
    if (!f.Blocks.empty())
      return pop(f.Blocks);
    break;
  }
  if (!Idle.empty())
    return pop(Idle);
  // Blocks of this stream waiting for their event are still fine here.
  for (Pending& p : PendingLists)
    if (p.Stream == stream && !p.Blocks.empty())
      return pop(p.Blocks);
  if (poll() && !Idle.empty())
    return pop(Idle);
  if (cover_other_streams(stream) && poll() && !Idle.empty())
    return pop(Idle);
  return 0;
}

void SmallBin::free(uint64_t address, CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  ++Cached;
  count_in_use(-1);
  for (Fresh& f : FreshLists) {
    if (f.Stream == stream) {
      f.Blocks.push_back(address);
      return;
    }
  }
  FreshLists.push_back(Fresh{stream, {address}});
}

void SmallBin::free_idle(uint64_t address) {
  std::lock_guard<SpinLock> lock(M);
  ++Cached;
  count_in_use(-1);
  Idle.push_back(address);
}

uint64_t SmallBin::add_slab(uint64_t base, size_t blocks, CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  Slabs.emplace(base, blocks);
  count_in_use(+1);
  if (blocks > 1) {
    Fresh* list = nullptr;
    for (Fresh& f : FreshLists)
      if (f.Stream == stream)
        list = &f;
    if (!list) {
      FreshLists.push_back(Fresh{stream, {}});
      list = &FreshLists.back();
    }
    // Highest address first, so the stack hands out ascending addresses.
    for (size_t i = blocks - 1; i >= 1; --i)
      list->Blocks.push_back(base + i * BlockSize);
    Cached += blocks - 1;
  }
  return base;
}

bool SmallBin::poll() {
  bool any = false;
  for (size_t i = 0; i < PendingLists.size();) {
    Pending& p = PendingLists[i];
    bool done = p.Blocks.empty() || Backend->query(p.Event);
    if (!done) {
      ++i;
      continue;
    }
    any |= !p.Blocks.empty();
    Idle.insert(Idle.end(), p.Blocks.begin(), p.Blocks.end());
    Backend->destroy(p.Event);
    PendingLists[i] = std::move(PendingLists.back());
    PendingLists.pop_back();
  }
  return any;
}

bool SmallBin::cover_other_streams(CUstream stream) {
  bool recorded = false;
  for (Fresh& f : FreshLists) {
    if (f.Stream == stream || f.Blocks.empty())
      continue;
    PendingLists.push_back(Pending{f.Stream, Backend->record(f.Stream), NextSeq++, {}});
    PendingLists.back().Blocks.swap(f.Blocks);
    recorded = true;
  }
  return recorded;
}

std::vector<std::pair<uint64_t, size_t>> SmallBin::take_free_slabs(bool settle) {
  if (settle) {
    // Cover every fresh list, then wait on events of our own recorded after
    // them (a concurrent poll may destroy the lists' events meanwhile).
    std::vector<BackendEvent> own;
    uint64_t covered = 0;
    {
      std::lock_guard<SpinLock> lock(M);
      for (Fresh& f : FreshLists)
        if (!f.Blocks.empty()) {
          PendingLists.push_back(Pending{f.Stream, Backend->record(f.Stream), NextSeq++, {}});
          PendingLists.back().Blocks.swap(f.Blocks);
        }
      covered = NextSeq - 1;
      std::vector<CUstream> streams;
      for (const Pending& p : PendingLists)
        if (std::find(streams.begin(), streams.end(), p.Stream) == streams.end())
          streams.push_back(p.Stream);
      for (CUstream s : streams)
        own.push_back(Backend->record(s));
    }
    for (BackendEvent e : own) {
      Backend->synchronize(e);
      Backend->destroy(e);
    }
    std::lock_guard<SpinLock> lock(M);
    for (size_t i = 0; i < PendingLists.size();) {
      Pending& p = PendingLists[i];
      if (p.Seq > covered) {
        ++i;
        continue;
      }
      Idle.insert(Idle.end(), p.Blocks.begin(), p.Blocks.end());
      Backend->destroy(p.Event);
      PendingLists[i] = std::move(PendingLists.back());
      PendingLists.pop_back();
    }
  }

  std::lock_guard<SpinLock> lock(M);
  poll();
  std::unordered_map<uint64_t, size_t> free_in_slab;
  for (uint64_t address : Idle) {
    auto it = Slabs.upper_bound(address);
    --it;
    ++free_in_slab[it->first];
  }
  std::vector<std::pair<uint64_t, size_t>> slabs;
  for (auto it = Slabs.begin(); it != Slabs.end();) {
    auto count = free_in_slab.find(it->first);
    if (count == free_in_slab.end() || count->second != it->second) {
      ++it;
      continue;
    }
    slabs.emplace_back(it->first, it->second * BlockSize);
    it = Slabs.erase(it);
  }
  if (slabs.empty())
    return slabs;
  // Keep the idle blocks whose slab stays.
  std::erase_if(Idle, [&](uint64_t address) {
    auto it = Slabs.upper_bound(address);
    if (it == Slabs.begin())
      return true;
    --it;
    return address >= it->first + it->second * BlockSize;
  });
  for (const auto& [base, bytes] : slabs)
    Cached -= bytes / BlockSize;
  // Sorted by address, so the arena can coalesce neighbours as they come.
  std::sort(slabs.begin(), slabs.end());
  return slabs;
}

void SmallBin::retire(CUstream stream) {
  std::lock_guard<SpinLock> lock(M);
  for (size_t i = 0; i < FreshLists.size(); ++i) {
    if (FreshLists[i].Stream != stream)
      continue;
    Idle.insert(Idle.end(), FreshLists[i].Blocks.begin(), FreshLists[i].Blocks.end());
    FreshLists.erase(FreshLists.begin() + i);
    break;
  }
  for (size_t i = 0; i < PendingLists.size();) {
    Pending& p = PendingLists[i];
    if (p.Stream != stream) {
      ++i;
      continue;
    }
    Idle.insert(Idle.end(), p.Blocks.begin(), p.Blocks.end());
    Backend->destroy(p.Event);
    PendingLists[i] = std::move(PendingLists.back());
    PendingLists.pop_back();
  }
}

size_t SmallBin::cached_bytes() const {
  std::lock_guard<SpinLock> lock(M);
  return Cached * BlockSize;
}

uint64_t SmallBin::hits() const {
  std::lock_guard<SpinLock> lock(M);
  return Hits;
}

} // namespace gpukit::rt::detail
