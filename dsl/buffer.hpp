// Buffer: one block of device memory (host memory on the CPU fallback),
// obtained from the runtime's memory pool as a SpillableHandle: under memory
// pressure the pool may spill it to pinned host memory and bring it back, at
// a NEW address, when it is next pinned. Arrays hold it through a
// shared_ptr, so Array::share() gives two arrays one buffer.
//
//   auto buf = std::make_shared<detail::Buffer>(bytes);
//   rt::SpillableHandle::Pin pin = buf->pin(Buffer::use_stream()); // resident while pinned
//   launch(..., buf->address(), ...);                              // read after pinning
//
// Users never see a Buffer; it is the one place the DSL allocates memory.
// Whatever hands the memory to a kernel or a copy pins it first (see
// OperandPins); address() is the address of the last pin, exact while a pin
// lives and only an identity afterwards.
#pragma once

#include "runtime/allocator.hpp"
#include "runtime/spillable_handle.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gpukit::detail {

class Buffer {
public:
  /// Allocates `bytes` through rt::Runtime::get().memory_pool() as spillable
  /// memory; no memory for 0 bytes.
  explicit Buffer(size_t bytes);
  /// Returns the memory; work already ordered on it may still use it.
  ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// Makes the memory resident (restoring it if it was spilled; may throw
  /// Error{OutOfMemory}) until the pin dies, and updates address().
  rt::SpillableHandle::Pin pin(CUstream stream);
  /// The stream the calling thread's launches go to (the current task's on
  /// the GPU; the pool's default on the CPU fallback): what to pin for.
  static CUstream use_stream();

  /// The memory as of the last pin; exact only while a pin lives.
  rt::Allocation allocation() const { return {address(), Bytes}; }
  uint64_t address() const { return Address.load(std::memory_order_relaxed); }
  size_t bytes() const { return Bytes; }

private:
  rt::SpillableHandle Handle;
  size_t Bytes = 0;
  // Written by every pin (concurrent pins write the same value: a pinned
  // handle does not move), so atomic only to be race-free.
  std::atomic<uint64_t> Address{0};
};

} // namespace gpukit::detail
