#include "runtime/memory_backend_host.hpp"

#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gpukit::rt {

// ManualEvents -----------------------------------------------------------

uint64_t ManualEvents::record(CUstream stream) {
  std::lock_guard<std::mutex> lock(M);
  uint64_t id = Next++;
  bool done = std::find(AutoComplete.begin(), AutoComplete.end(), stream) != AutoComplete.end();
  Events.emplace(id, Event{stream, done});
  ++Recorded;
  return id;
}

bool ManualEvents::query(uint64_t event) {
  std::lock_guard<std::mutex> lock(M);
  auto it = Events.find(event);
  if (it == Events.end())
    throw Error(ErrorKind::Internal, fmt::format("query of unknown host event {}", event));
  return it->second.Done;
}

void ManualEvents::synchronize(uint64_t event) {
  std::lock_guard<std::mutex> lock(M);
  auto it = Events.find(event);
  if (it == Events.end())
    throw Error(ErrorKind::Internal, fmt::format("wait on unknown host event {}", event));
  ++Waits;
  // Waiting for an event means its stream has run up to it: everything
  // recorded earlier on that stream is complete too.
  CUstream stream = it->second.Stream;
  for (auto& [id, e] : Events)
    if (id <= event && e.Stream == stream)
      e.Done = true;
}

void ManualEvents::synchronize_stream(CUstream stream) {
  std::lock_guard<std::mutex> lock(M);
  ++Waits;
  for (auto& [id, e] : Events)
    if (e.Stream == stream)
      e.Done = true;
}

void ManualEvents::release(uint64_t event) {
  std::lock_guard<std::mutex> lock(M);
  Events.erase(event);
}

void ManualEvents::complete(CUstream stream) {
  std::lock_guard<std::mutex> lock(M);
  for (auto& [id, e] : Events)
    if (e.Stream == stream)
      e.Done = true;
}

void ManualEvents::set_auto_complete(CUstream stream, bool on) {
  std::lock_guard<std::mutex> lock(M);
  std::erase(AutoComplete, stream);
  if (on)
    AutoComplete.push_back(stream);
}

void ManualEvents::complete_all() {
  std::lock_guard<std::mutex> lock(M);
  for (auto& [id, e] : Events)
    e.Done = true;
}

uint64_t ManualEvents::recorded() const {
  std::lock_guard<std::mutex> lock(M);
  return Recorded;
}

uint64_t ManualEvents::host_waits() const {
  std::lock_guard<std::mutex> lock(M);
  return Waits;
}

size_t ManualEvents::live() const {
  std::lock_guard<std::mutex> lock(M);
  return Events.size();
}

// HostMemoryBackend ------------------------------------------------------

namespace {

/// Segments and pinned blocks are page-aligned, like the driver's.
constexpr size_t kHostPage = 4096;

/// Adds `bytes` to `counter` unless that would pass `limit`.
bool try_charge(std::atomic<size_t>& counter, size_t bytes, size_t limit) {
  size_t current = counter.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || current > limit - bytes)
      return false;
  } while (!counter.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
  return true;
}

void* host_pointer(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }

} // namespace

HostMemoryBackend::HostMemoryBackend(Options options) : Opts(std::move(options)) {
  Events = Opts.events ? Opts.events : std::make_shared<ImmediateEvents>();
}

HostMemoryBackend::~HostMemoryBackend() = default;

uint64_t HostMemoryBackend::reserve(size_t bytes) {
  ReserveCalls.fetch_add(1, std::memory_order_relaxed);
  if (!try_charge(Reserved, bytes, Opts.capacity))
    return 0;
  void* memory = std::aligned_alloc(kHostPage, align_up(bytes, kHostPage));
  if (!memory) {
    Reserved.fetch_sub(bytes);
    return 0;
  }
  return reinterpret_cast<uintptr_t>(memory);
}

void HostMemoryBackend::release(uint64_t address, size_t bytes) {
  ReleaseCalls.fetch_add(1, std::memory_order_relaxed);
  Reserved.fetch_sub(bytes);
  std::free(host_pointer(address));
}

void* HostMemoryBackend::allocate_pinned(size_t bytes) {
  if (!try_charge(Pinned, bytes, Opts.pinned_capacity))
    return nullptr;
  void* memory = std::aligned_alloc(kHostPage, align_up(bytes, kHostPage));
  if (!memory)
    Pinned.fetch_sub(bytes);
  return memory;
}

void HostMemoryBackend::free_pinned(void* pointer, size_t bytes) {
  if (!pointer)
    return;
  Pinned.fetch_sub(bytes);
  std::free(pointer);
}

void HostMemoryBackend::copy_to_device(uint64_t dst, const void* src, size_t bytes, CUstream) {
  std::memcpy(host_pointer(dst), src, bytes);
}

void HostMemoryBackend::copy_to_host(void* dst, uint64_t src, size_t bytes, CUstream) {
  std::memcpy(dst, host_pointer(src), bytes);
}

void HostMemoryBackend::copy_on_device(uint64_t dst, uint64_t src, size_t bytes, CUstream) {
  std::memmove(host_pointer(dst), host_pointer(src), bytes);
}

void HostMemoryBackend::fill(uint64_t dst, size_t bytes, uint8_t value, CUstream) {
  std::memset(host_pointer(dst), value, bytes);
}

CUstream HostMemoryBackend::create_stream() {
  return reinterpret_cast<CUstream>(NextStream.fetch_add(1, std::memory_order_relaxed));
}

} // namespace gpukit::rt
