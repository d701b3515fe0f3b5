#include "runtime/pinned_host_pool.hpp"

#include "runtime/memory_backend.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace gpukit::rt {

namespace {

/// Pinning works on whole pages; sizes follow the pool's classes so blocks
/// of similar requests are interchangeable.
size_t pinned_block_size(size_t bytes) { return pool_block_size(std::max<size_t>(bytes, 4096)); }

} // namespace

PinnedHostPool::~PinnedHostPool() {
  for (auto [address, bytes] : Blocks)
    Backend.free_pinned(reinterpret_cast<void*>(address), bytes);
}

PinnedBlock PinnedHostPool::allocate(size_t bytes) {
  if (bytes == 0)
    return {};
  size_t size = pinned_block_size(bytes);
  {
    std::lock_guard<std::mutex> lock(M);
    auto it = Cached.lower_bound(size);
    if (it != Cached.end() && it->first <= size + size / 4) {
      PinnedBlock block{it->second, it->first};
      Cached.erase(it);
      Stats.in_use += block.bytes;
      ++Stats.hits;
      return block;
    }
  }
  // Pin outside the lock: it can take milliseconds.
  void* data = Backend.allocate_pinned(size);
  if (!data && trim() > 0)
    data = Backend.allocate_pinned(size);
  if (!data)
    return {};
  std::lock_guard<std::mutex> lock(M);
  Blocks.emplace(reinterpret_cast<uintptr_t>(data), size);
  Stats.reserved += size;
  Stats.in_use += size;
  ++Stats.misses;
  return PinnedBlock{data, size};
}

void PinnedHostPool::deallocate(PinnedBlock block) {
  if (!block)
    return;
  std::lock_guard<std::mutex> lock(M);
  auto it = Blocks.find(reinterpret_cast<uintptr_t>(block.data));
  if (it == Blocks.end() || it->second != block.bytes)
    throw Error(ErrorKind::Internal,
                fmt::format("PinnedHostPool::deallocate: {} ({} bytes) was not allocated here",
                            block.data, block.bytes));
  Cached.emplace(block.bytes, block.data);
  Stats.in_use -= block.bytes;
}

size_t PinnedHostPool::trim() {
  std::vector<std::pair<void*, size_t>> victims;
  {
    std::lock_guard<std::mutex> lock(M);
    for (auto [bytes, data] : Cached) {
      victims.emplace_back(data, bytes);
      Blocks.erase(reinterpret_cast<uintptr_t>(data));
      Stats.reserved -= bytes;
    }
    Cached.clear();
  }
  size_t released = 0;
  for (auto [data, bytes] : victims) {
    Backend.free_pinned(data, bytes);
    released += bytes;
  }
  return released;
}

bool PinnedHostPool::contains(const void* pointer, size_t bytes) const {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard<std::mutex> lock(M);
  auto it = Blocks.upper_bound(address);
  if (it == Blocks.begin())
    return false;
  --it;
  return address + bytes <= it->first + it->second;
}

PinnedHostPoolStats PinnedHostPool::stats() const {
  std::lock_guard<std::mutex> lock(M);
  return Stats;
}

} // namespace gpukit::rt
