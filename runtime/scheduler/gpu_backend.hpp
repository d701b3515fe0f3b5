// GpuBackend: the DispatchBackend of the GPU, a thin layer over the driver
// table (runtime/driver_api.hpp). Each call makes the backend's context
// current in the calling thread first, so user threads may launch without
// setting it up, and turns a failed CUresult into gpukit::Error naming the
// call.
//
//   GpuBackend gpu(*rt.driver(), context);
//   CUstream s = gpu.create_stream(gpu.stream_priorities().greatest);
#pragma once

#include "runtime/scheduler/dispatch_backend.hpp"

namespace gpukit::rt {
struct DriverApi;
}

namespace gpukit::rt::sched {

class GpuBackend final : public DispatchBackend {
public:
  /// `context`: the context every call runs in; nullptr takes the calling
  /// thread's current one (throws Error{Unavailable} when there is none).
  GpuBackend(const DriverApi& api, CUcontext context);

  const DriverApi& api() const { return Api; }
  CUcontext context() const { return Context; }

  std::string_view name() const override { return "gpu"; }
  StreamPriorities stream_priorities() override;
  CUstream create_stream(int priority) override;
  void destroy_stream(CUstream stream) noexcept override;
  CUevent create_event(bool timing) override;
  void destroy_event(CUevent event) noexcept override;
  void record(CUevent event, CUstream stream) override;
  bool query(CUevent event) override;
  void wait(CUevent event) override;
  void stream_wait(CUstream stream, CUevent event) override;
  bool query_stream(CUstream stream) override;
  Nanos elapsed(CUevent start, CUevent end) override;
  void synchronize(CUstream stream) override;
  void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream,
              void** args) override;
  void launch_host(CUstream stream, llvm::function_ref<void()> work) override;
  void begin_capture(CUstream stream) override;
  CUgraphExec end_capture(CUstream stream) override;
  void abort_capture(CUstream stream) noexcept override;
  void launch_graph(CUgraphExec graph, CUstream stream) override;
  void destroy_graph(CUgraphExec graph) noexcept override;

private:
  void bind() const;

  const DriverApi& Api;
  CUcontext Context;
};

} // namespace gpukit::rt::sched
