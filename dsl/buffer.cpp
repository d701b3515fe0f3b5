#include "dsl/buffer.hpp"

#include "runtime/runtime.hpp"

namespace gpukit::detail {

Buffer::Buffer(size_t bytes) {
  if (bytes == 0)
    return;
  Memory = rt::Runtime::get().allocator().allocate(bytes);
}

Buffer::~Buffer() {
  if (!Memory)
    return;
  rt::Runtime::get().allocator().deallocate(Memory);
}

} // namespace gpukit::detail
