// DriverAllocator: device memory straight from cuMemAlloc / cuMemFree. The
// GPU backend's first allocator, to be replaced by the caching memory pool;
// it exists so arrays work before the pool does.
//
//   DriverAllocator alloc(*DriverApi::load(), context, device_name);
//   Allocation a = alloc.allocate(1 << 20);  // 256-byte aligned by the driver
//   alloc.deallocate(a);
//
// Every call is synchronous with the device: cuMemFree waits for work that
// may still use the memory, so the `stream` arguments need no ordering.
#pragma once

#include "runtime/allocator.hpp"

#include <string>

namespace gpukit::rt {

struct DriverApi;

class DriverAllocator final : public DeviceAllocator {
public:
  /// `device_name` only names the GPU in out-of-memory messages.
  DriverAllocator(const DriverApi& api, CUcontext context, std::string device_name)
      : Api(api), Context(context), DeviceName(std::move(device_name)) {}

  /// Zero bytes give an empty Allocation. Throws Error{OutOfMemory} with the
  /// request and the device's free and total memory.
  Allocation allocate(size_t bytes, CUstream stream = nullptr) override;
  void deallocate(Allocation allocation, CUstream stream = nullptr) override;

private:
  const DriverApi& Api;
  CUcontext Context;
  std::string DeviceName;
};

/// "1.50 GiB", "256 bytes": sizes in messages.
std::string format_bytes(uint64_t bytes);

} // namespace gpukit::rt
