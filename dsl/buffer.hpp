// Buffer: one block of device memory (host memory on the CPU fallback),
// obtained from and returned to the runtime's allocator. Arrays hold it
// through a shared_ptr, so Array::share() gives two arrays one buffer.
//
//   auto buf = std::make_shared<detail::Buffer>(bytes);
//   rt::Allocation a = buf->allocation();
//
// Users never see a Buffer; it is the one place the DSL allocates memory.
#pragma once

#include "runtime/allocator.hpp"

#include <cstddef>

namespace gpukit::detail {

class Buffer {
public:
  /// Allocates `bytes` through rt::Runtime::get().allocator(); no memory for 0 bytes.
  explicit Buffer(size_t bytes);
  /// Returns the memory; work already ordered on the runtime's stream may still use it.
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const rt::Allocation& allocation() const { return Memory; }

private:
  rt::Allocation Memory;
};

} // namespace gpukit::detail
