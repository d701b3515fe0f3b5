// MemoryBackend: the raw memory and ordering primitives under the memory
// pool, the pinned staging pool and the transfer engine. The policy (size
// classes, caching, stream-ordered reuse, quota, spilling) is written once
// against this interface and runs over two real implementations:
//
//   DriverMemoryBackend gpu(api, context);  // cuMemAlloc segments, CUevents, cuMemcpy*Async
//   HostMemoryBackend cpu;                  // aligned_alloc; streams are ids, events are simulated
//   MemoryPool pool(std::make_unique<HostMemoryBackend>(), {});
//
// "Device" addresses are uint64_t (a CUdeviceptr, or a host pointer on the
// host backend). Streams are CUstream values; on the host backend they are
// opaque ids that need not be real streams. Copies and fills are ordered on
// a stream; an event records a point in a stream's order.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpukit::rt {

/// A recorded point in a stream's order. Owned by whoever recorded it until
/// handed back with MemoryBackend::destroy().
struct BackendEvent {
  uintptr_t handle = 0;
  explicit operator bool() const { return handle != 0; }
};

class MemoryBackend {
public:
  virtual ~MemoryBackend() = default;

  /// What the memory is called in messages: "device" or "host".
  virtual std::string_view memory_name() const = 0;

  // Segments: the large, rarely allocated pieces the pool carves up.
  /// `bytes` of memory aligned to at least 256 bytes, or 0 when the backend
  /// is out of memory. Throws Error for any other failure.
  virtual uint64_t reserve(size_t bytes) = 0;
  /// Returns a segment. The caller has made sure no work still uses it.
  virtual void release(uint64_t address, size_t bytes) = 0;

  // Page-locked host memory (plain host memory on the host backend).
  /// nullptr when out of memory.
  virtual void* allocate_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* pointer, size_t bytes) = 0;

  // Work ordered on a stream. Host memory may be pageable or pinned.
  virtual void copy_to_device(uint64_t dst, const void* src, size_t bytes, CUstream stream) = 0;
  virtual void copy_to_host(void* dst, uint64_t src, size_t bytes, CUstream stream) = 0;
  virtual void copy_on_device(uint64_t dst, uint64_t src, size_t bytes, CUstream stream) = 0;
  virtual void fill(uint64_t dst, size_t bytes, uint8_t value, CUstream stream) = 0;

  // Streams the backend creates for itself (copy streams).
  virtual CUstream create_stream() = 0;
  virtual void destroy_stream(CUstream stream) = 0;
  /// Blocks until all work ordered on `stream` so far is done.
  virtual void synchronize_stream(CUstream stream) = 0;

  // Events.
  /// Records the current end of `stream`'s order.
  virtual BackendEvent record(CUstream stream) = 0;
  /// True when everything ordered before `event` is done. Never blocks.
  virtual bool query(BackendEvent event) = 0;
  /// Blocks the calling thread until `event` is done.
  virtual void synchronize(BackendEvent event) = 0;
  /// Orders work later submitted to `stream` after `event`, without
  /// blocking the host.
  virtual void wait(CUstream stream, BackendEvent event) = 0;
  virtual void destroy(BackendEvent event) = 0;
};

} // namespace gpukit::rt
