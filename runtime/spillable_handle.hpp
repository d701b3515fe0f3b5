// SpillableHandle: pool memory that may leave the device. When the pool runs
// out of memory it copies the least recently used unpinned handles to pinned
// host memory and frees their device blocks; the next pin() brings the data
// back, possibly at a NEW address. So code that launches work on the memory
// pins it and takes the address from the pin, at launch time:
//
//   SpillableHandle data = pool.allocate_spillable(bytes, stream);
//   {
//     SpillableHandle::Pin pin = data.pin(stream);   // resident while `pin` lives
//     void* args[] = {&ptr = pin.address(), ...};    // never cache the address
//     launch(kernel, args, stream);
//   }                                                // unpinned: evictable again
//
// Rules for users (the DSL's arrays):
//  * Pin every operand of a launch before enqueueing it (pinning one may
//    spill another that is not pinned yet) and keep the pins until the
//    launch is enqueued. A pinned handle is busy: it is never spilled.
//  * After unpinning, work already enqueued on the pin's stream may still
//    use the memory: a spill is ordered after it (the copy runs on the
//    streams that used the handle). Handles whose streams are idle are
//    spilled first, so pending launches rarely stall a spill.
//  * A handle must not outlive its pool, nor a pin its handle. Not
//    thread-safe per handle beyond concurrent pins, which are.
//
// Cost: pinning a resident handle on a stream it already used (up to four
// streams) takes no lock, only a few atomic operations; the first pin on a
// stream, a restore, or a pin racing a spill takes the handle's mutex
// (memory_pool_spill.hpp explains why the two paths agree).
#pragma once

#include "runtime/allocator.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace gpukit::rt {

class MemoryPool;

namespace detail {
struct SpillEntry;
}

class SpillableHandle {
public:
  /// Keeps the memory resident and at one address while it lives.
  class Pin {
  public:
    Pin() = default;
    Pin(Pin&& other) noexcept { swap(other); }
    Pin& operator=(Pin&& other) noexcept {
      Pin(std::move(other)).swap(*this);
      return *this;
    }
    ~Pin();

    /// The device address, valid until the pin dies.
    uint64_t address() const { return Memory.address; }
    Allocation allocation() const { return Memory; }
    explicit operator bool() const { return Entry != nullptr; }

  private:
    friend class SpillableHandle;
    Pin(detail::SpillEntry* entry, CUstream stream, Allocation memory)
        : Entry(entry), Stream(stream), Memory(memory) {}
    void swap(Pin& other) noexcept;

    detail::SpillEntry* Entry = nullptr;
    CUstream Stream = nullptr;
    Allocation Memory;
  };

  SpillableHandle() = default;
  SpillableHandle(SpillableHandle&& other) noexcept : Entry(other.Entry) { other.Entry = nullptr; }
  SpillableHandle& operator=(SpillableHandle&& other) noexcept;
  /// Frees the memory (device or host), ordered after its last use.
  ~SpillableHandle() { reset(); }

  /// Makes the memory resident (restoring it on `stream` if it was spilled;
  /// may throw Error{OutOfMemory}) and keeps it so until the Pin dies.
  /// `stream` is where the memory will be used (nullptr: the pool's default).
  Pin pin(CUstream stream = nullptr);
  /// True while the data lives in host memory.
  bool spilled() const;
  size_t bytes() const;
  explicit operator bool() const { return Entry != nullptr; }
  /// Frees the memory now.
  void reset();

private:
  friend class MemoryPool;
  explicit SpillableHandle(detail::SpillEntry* entry) : Entry(entry) {}
  /// pin()'s slow path, under the entry's mutex (the pin count is raised).
  static Pin pin_locked(detail::SpillEntry& entry, CUstream stream);

  detail::SpillEntry* Entry = nullptr;
};

} // namespace gpukit::rt
