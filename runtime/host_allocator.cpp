#include "runtime/host_allocator.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace gpukit::rt {

Allocation HostAllocator::allocate(size_t bytes, CUstream) {
  if (bytes == 0)
    return {};
  // aligned_alloc wants a multiple of the alignment; the slack is never
  // visible to the caller, whose Allocation says `bytes`.
  size_t rounded = (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  if (rounded < bytes) // overflow
    rounded = 0;
  void* memory = rounded ? std::aligned_alloc(kAllocationAlignment, rounded) : nullptr;
  if (!memory)
    throw Error(ErrorKind::OutOfMemory,
                fmt::format("cannot allocate {} bytes of host memory for the CPU simulation backend",
                            bytes));
  return Allocation{static_cast<uint64_t>(reinterpret_cast<uintptr_t>(memory)), bytes};
}

void HostAllocator::deallocate(Allocation allocation, CUstream) { std::free(allocation.host_ptr()); }

} // namespace gpukit::rt
