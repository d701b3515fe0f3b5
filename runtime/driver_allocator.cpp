#include "runtime/driver_allocator.hpp"

#include "runtime/driver_api.hpp"
#include "runtime/driver_handles.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::rt {

std::string format_bytes(uint64_t bytes) {
  constexpr const char* Units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return fmt::format("{} bytes", bytes);
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(Units)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, Units[unit]);
}

Allocation DriverAllocator::allocate(size_t bytes, CUstream) {
  if (bytes == 0)
    return {};
  make_current(Api, Context);
  CUdeviceptr address = 0;
  CUresult result = Api.cuMemAlloc(&address, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_bytes = 0, total_bytes = 0;
    std::string state;
    if (Api.cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS)
      state = fmt::format("; {} of {} free", format_bytes(free_bytes), format_bytes(total_bytes));
    throw Error(ErrorKind::OutOfMemory,
                fmt::format("cannot allocate {} ({} bytes) of GPU memory on {}{}; free arrays that "
                            "are no longer needed or work on smaller pieces",
                            format_bytes(bytes), bytes, DeviceName, state));
  }
  check(result, fmt::format("cuMemAlloc({} bytes)", bytes));
  return Allocation{static_cast<uint64_t>(address), bytes};
}

void DriverAllocator::deallocate(Allocation allocation, CUstream) {
  if (!allocation)
    return;
  make_current(Api, Context);
  CUresult result = Api.cuMemFree(allocation.device_ptr());
  // At process exit the driver may be torn down before the last array: the
  // memory is gone with the context anyway.
  if (result == CUDA_ERROR_DEINITIALIZED)
    return;
  check(result, fmt::format("cuMemFree({} bytes)", allocation.bytes));
}

} // namespace gpukit::rt
