// HostAllocator: the CPU fallback's DeviceAllocator. "Device" memory is
// ordinary host memory aligned to kAllocationAlignment, so the CPU evaluator
// reads arrays through Allocation::host_ptr().
//
//   HostAllocator host;
//   Allocation a = host.allocate(1024);   // a.host_ptr() is 256-byte aligned
//   host.deallocate(a);
//
// Streams are ignored: the CPU backend runs everything in order.
#pragma once

#include "runtime/allocator.hpp"

namespace gpukit::rt {

class HostAllocator final : public DeviceAllocator {
public:
  /// Zero bytes give an empty Allocation. Throws Error{OutOfMemory}.
  Allocation allocate(size_t bytes, CUstream stream = nullptr) override;
  void deallocate(Allocation allocation, CUstream stream = nullptr) override;
};

} // namespace gpukit::rt
