// DeviceAllocator: the one interface through which every array's memory is
// obtained. On the GPU backend an Allocation is device memory (a CUdeviceptr);
// on the CPU fallback it is ordinary host memory, so the same code paths run.
//
//   Allocation a = rt.allocator().allocate(bytes, stream);
//   ...
//   rt.allocator().deallocate(a, stream);
//
// Allocations are aligned to at least 256 bytes, so 16-byte vector loads are
// always legal at offset 0. Nothing outside runtime/ calls cuMemAlloc.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace gpukit::rt {

/// Device memory on the GPU backend, host memory on the CPU fallback.
struct Allocation {
  uint64_t address = 0;
  size_t bytes = 0;

  explicit operator bool() const { return address != 0; }
  CUdeviceptr device_ptr() const { return static_cast<CUdeviceptr>(address); }
  /// Valid on the CPU fallback only.
  void* host_ptr() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }
};

/// Minimum alignment of every Allocation's address.
inline constexpr size_t kAllocationAlignment = 256;

class DeviceAllocator {
public:
  virtual ~DeviceAllocator() = default;

  /// Returns `bytes` of memory usable by work ordered on `stream` (nullptr:
  /// the runtime's default stream). Throws Error{OutOfMemory} with the numbers.
  virtual Allocation allocate(size_t bytes, CUstream stream = nullptr) = 0;
  /// Returns memory; work already ordered on `stream` may still use it.
  virtual void deallocate(Allocation allocation, CUstream stream = nullptr) = 0;
};

} // namespace gpukit::rt
