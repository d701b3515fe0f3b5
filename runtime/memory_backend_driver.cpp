#include "runtime/memory_backend_driver.hpp"

#include "runtime/driver_api.hpp"
#include "runtime/driver_handles.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::rt {

namespace {

CUevent as_event(BackendEvent event) { return reinterpret_cast<CUevent>(event.handle); }

} // namespace

DriverMemoryBackend::DriverMemoryBackend(const DriverApi& api, CUcontext context)
    : Api(api), Context(context) {
  if (!Context)
    check(Api.cuCtxGetCurrent(&Context), "cuCtxGetCurrent");
  if (!Context)
    throw Error(ErrorKind::Usage, "DriverMemoryBackend needs a CUDA context: pass one, or make one "
                                  "current in the creating thread");
}

DriverMemoryBackend::~DriverMemoryBackend() {
  // At process exit the driver may already be gone: failures are ignored.
  CUcontext current = nullptr;
  if (Api.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != Context)
    (void)Api.cuCtxSetCurrent(Context);
  for (CUevent event : SpareEvents)
    (void)Api.cuEventDestroy(event);
}

uint64_t DriverMemoryBackend::reserve(size_t bytes) {
  make_current(Api, Context);
  CUdeviceptr address = 0;
  CUresult result = Api.cuMemAlloc(&address, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    return 0;
  check(result, fmt::format("cuMemAlloc({} bytes)", bytes));
  return static_cast<uint64_t>(address);
}

void DriverMemoryBackend::release(uint64_t address, size_t bytes) {
  make_current(Api, Context);
  CUresult result = Api.cuMemFree(static_cast<CUdeviceptr>(address));
  if (result == CUDA_ERROR_DEINITIALIZED) // process exit: the memory went with the context
    return;
  check(result, fmt::format("cuMemFree({} bytes)", bytes));
}

void* DriverMemoryBackend::allocate_pinned(size_t bytes) {
  make_current(Api, Context);
  void* pointer = nullptr;
  CUresult result = Api.cuMemAllocHost(&pointer, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    return nullptr;
  check(result, fmt::format("cuMemAllocHost({} bytes)", bytes));
  return pointer;
}

void DriverMemoryBackend::free_pinned(void* pointer, size_t bytes) {
  if (!pointer)
    return;
  make_current(Api, Context);
  CUresult result = Api.cuMemFreeHost(pointer);
  if (result == CUDA_ERROR_DEINITIALIZED)
    return;
  check(result, fmt::format("cuMemFreeHost({} bytes)", bytes));
}

void DriverMemoryBackend::copy_to_device(uint64_t dst, const void* src, size_t bytes,
                                         CUstream stream) {
  make_current(Api, Context);
  check(Api.cuMemcpyHtoDAsync(static_cast<CUdeviceptr>(dst), src, bytes, stream),
        fmt::format("cuMemcpyHtoDAsync({} bytes)", bytes));
}

void DriverMemoryBackend::copy_to_host(void* dst, uint64_t src, size_t bytes, CUstream stream) {
  make_current(Api, Context);
  check(Api.cuMemcpyDtoHAsync(dst, static_cast<CUdeviceptr>(src), bytes, stream),
        fmt::format("cuMemcpyDtoHAsync({} bytes)", bytes));
}

void DriverMemoryBackend::copy_on_device(uint64_t dst, uint64_t src, size_t bytes,
                                         CUstream stream) {
  make_current(Api, Context);
  check(Api.cuMemcpyDtoDAsync(static_cast<CUdeviceptr>(dst), static_cast<CUdeviceptr>(src), bytes,
                              stream),
        fmt::format("cuMemcpyDtoDAsync({} bytes)", bytes));
}

void DriverMemoryBackend::fill(uint64_t dst, size_t bytes, uint8_t value, CUstream stream) {
  make_current(Api, Context);
  check(Api.cuMemsetD8Async(static_cast<CUdeviceptr>(dst), value, bytes, stream),
        fmt::format("cuMemsetD8Async({} bytes)", bytes));
}

CUstream DriverMemoryBackend::create_stream() {
  make_current(Api, Context);
  CUstream stream = nullptr;
  check(Api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return stream;
}

void DriverMemoryBackend::destroy_stream(CUstream stream) {
  make_current(Api, Context);
  (void)Api.cuStreamDestroy(stream);
}

void DriverMemoryBackend::synchronize_stream(CUstream stream) {
  make_current(Api, Context);
  check(Api.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

BackendEvent DriverMemoryBackend::record(CUstream stream) {
  make_current(Api, Context);
  CUevent event = nullptr;
  {
    std::lock_guard<std::mutex> lock(EventsMutex);
    if (!SpareEvents.empty()) {
      event = SpareEvents.back();
      SpareEvents.pop_back();
    }
  }
  if (!event)
    check(Api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult result = Api.cuEventRecord(event, stream);
  if (result != CUDA_SUCCESS) {
    (void)Api.cuEventDestroy(event);
    check(result, "cuEventRecord");
  }
  return BackendEvent{reinterpret_cast<uintptr_t>(event)};
}

bool DriverMemoryBackend::query(BackendEvent event) {
  make_current(Api, Context);
  CUresult result = Api.cuEventQuery(as_event(event));
  if (result == CUDA_ERROR_NOT_READY)
    return false;
  check(result, "cuEventQuery");
  return true;
}

void DriverMemoryBackend::synchronize(BackendEvent event) {
  make_current(Api, Context);
  check(Api.cuEventSynchronize(as_event(event)), "cuEventSynchronize");
}

void DriverMemoryBackend::wait(CUstream stream, BackendEvent event) {
  make_current(Api, Context);
  check(Api.cuStreamWaitEvent(stream, as_event(event), 0), "cuStreamWaitEvent");
}

void DriverMemoryBackend::destroy(BackendEvent event) {
  if (!event)
    return;
  // A recorded event may be re-recorded at once: cuEventRecord replaces the
  // captured work, and nobody holds the old point any more.
  std::lock_guard<std::mutex> lock(EventsMutex);
  SpareEvents.push_back(as_event(event));
}

} // namespace gpukit::rt
