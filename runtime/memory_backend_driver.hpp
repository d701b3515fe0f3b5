// DriverMemoryBackend: the memory pool's backend on a GPU, through the
// driver table (never a linked libcuda). Segments are cuMemAlloc'd, events
// are CUevents without timing (recycled, since cuEventCreate costs
// microseconds), copies are cuMemcpy*Async, pinned memory is cuMemAllocHost.
//
//   DriverMemoryBackend backend(*DriverApi::load(), context);
//   MemoryPool pool(std::make_unique<DriverMemoryBackend>(api, context), {});
//
// Every call makes `context` current first, so any thread may use it.
#pragma once

#include "runtime/memory_backend.hpp"

#include <mutex>
#include <vector>

namespace gpukit::rt {

struct DriverApi;

class DriverMemoryBackend final : public MemoryBackend {
public:
  /// `context` nullptr: the context current in the calling thread (Error
  /// Usage when there is none).
  DriverMemoryBackend(const DriverApi& api, CUcontext context = nullptr);
  ~DriverMemoryBackend() override;

  std::string_view memory_name() const override { return "device"; }
  uint64_t reserve(size_t bytes) override;
  void release(uint64_t address, size_t bytes) override;
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* pointer, size_t bytes) override;
  void copy_to_device(uint64_t dst, const void* src, size_t bytes, CUstream stream) override;
  void copy_to_host(void* dst, uint64_t src, size_t bytes, CUstream stream) override;
  void copy_on_device(uint64_t dst, uint64_t src, size_t bytes, CUstream stream) override;
  void fill(uint64_t dst, size_t bytes, uint8_t value, CUstream stream) override;
  CUstream create_stream() override;
  void destroy_stream(CUstream stream) override;
  void synchronize_stream(CUstream stream) override;
  BackendEvent record(CUstream stream) override;
  bool query(BackendEvent event) override;
  void synchronize(BackendEvent event) override;
  void wait(CUstream stream, BackendEvent event) override;
  void destroy(BackendEvent event) override;

  const DriverApi& api() const { return Api; }
  CUcontext context() const { return Context; }

private:
  const DriverApi& Api;
  CUcontext Context = nullptr;
  std::mutex EventsMutex;
  std::vector<CUevent> SpareEvents;
};

} // namespace gpukit::rt
