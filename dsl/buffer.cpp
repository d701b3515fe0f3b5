#include "dsl/buffer.hpp"

#include "runtime/memory_pool.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/scheduling.hpp"

namespace gpukit::detail {

Buffer::Buffer(size_t bytes) : Bytes(bytes) {
  if (bytes == 0)
    return;
  rt::Runtime& runtime = rt::Runtime::get();
  Handle = runtime.memory_pool().allocate_spillable(bytes);
  // A new handle is resident; its address is known without a pin (which
  // would only count a use) until the pool spills it.
  Address.store(Handle.pin().address(), std::memory_order_relaxed);
}

rt::SpillableHandle::Pin Buffer::pin(CUstream stream) {
  if (!Handle)
    return {};
  rt::SpillableHandle::Pin p = Handle.pin(stream);
  Address.store(p.address(), std::memory_order_relaxed);
  return p;
}

CUstream Buffer::use_stream() {
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.on_gpu())
    return nullptr; // the host pool's default stream; the CPU backend runs work inline
  return runtime.scheduling().dispatch().stream_for(rt::sched::current_task());
}

} // namespace gpukit::detail
