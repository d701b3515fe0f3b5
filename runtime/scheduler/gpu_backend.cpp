#include "runtime/scheduler/gpu_backend.hpp"

#include "runtime/driver_api.hpp"
#include "runtime/driver_handles.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpukit::rt::sched {

GpuBackend::GpuBackend(const DriverApi& api, CUcontext context) : Api(api), Context(context) {
  if (!Context) {
    check(Api.cuCtxGetCurrent(&Context), "cuCtxGetCurrent");
    if (!Context)
      throw Error(ErrorKind::Unavailable,
                  "GpuBackend needs a CUDA context: pass one, or make one current in this thread first");
  }
}

void GpuBackend::bind() const { make_current(Api, Context); }

StreamPriorities GpuBackend::stream_priorities() {
  bind();
  StreamPriorities p;
  check(Api.cuCtxGetStreamPriorityRange(&p.least, &p.greatest), "cuCtxGetStreamPriorityRange");
  return p;
}

CUstream GpuBackend::create_stream(int priority) {
  bind();
  CUstream stream = nullptr;
  check(Api.cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, priority),
        fmt::format("cuStreamCreateWithPriority(priority {})", priority));
  return stream;
}

void GpuBackend::destroy_stream(CUstream stream) noexcept {
  CUcontext current = nullptr;
  if (Api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != Context)
    (void)Api.cuCtxSetCurrent(Context);
  (void)Api.cuStreamDestroy(stream);
}

CUevent GpuBackend::create_event(bool timing) {
  bind();
  CUevent event = nullptr;
  check(Api.cuEventCreate(&event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  return event;
}

void GpuBackend::destroy_event(CUevent event) noexcept {
  CUcontext current = nullptr;
  if (Api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != Context)
    (void)Api.cuCtxSetCurrent(Context);
  (void)Api.cuEventDestroy(event);
}

void GpuBackend::record(CUevent event, CUstream stream) {
  bind();
  check(Api.cuEventRecord(event, stream), "cuEventRecord");
}

bool GpuBackend::query(CUevent event) {
  bind();
  CUresult r = Api.cuEventQuery(event);
  if (r == CUDA_SUCCESS)
    return true;
  if (r == CUDA_ERROR_NOT_READY)
    return false;
  check(r, "cuEventQuery");
  return false;
}

void GpuBackend::wait(CUevent event) {
  bind();
  check(Api.cuEventSynchronize(event), "cuEventSynchronize");
}

void GpuBackend::stream_wait(CUstream stream, CUevent event) {
  bind();
  check(Api.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

bool GpuBackend::query_stream(CUstream stream) {
  bind();
  CUresult r = Api.cuStreamQuery(stream);
  if (r == CUDA_SUCCESS)
    return true;
  if (r == CUDA_ERROR_NOT_READY)
    return false;
  check(r, "cuStreamQuery");
  return false;
}

Nanos GpuBackend::elapsed(CUevent start, CUevent end) {
  bind();
  float ms = 0;
  check(Api.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return Nanos(std::llround(static_cast<double>(ms) * 1e6));
}

void GpuBackend::synchronize(CUstream stream) {
  bind();
  check(Api.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void GpuBackend::launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream,
                        void** args) {
  // The context check is a TLS read in the driver; cheaper than a failed
  // launch and a retry, and launches come from user threads.
  bind();
  CUresult r = Api.cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes,
                                  stream, args, nullptr);
  if (r != CUDA_SUCCESS)
    check(r, fmt::format("cuLaunchKernel (grid {}x{}x{}, block {}x{}x{}, {} bytes of shared memory)", grid.x,
                         grid.y, grid.z, block.x, block.y, block.z, shared_bytes));
}

void GpuBackend::launch_host(CUstream stream, llvm::function_ref<void()> work) {
  // cuLaunchHostFunc would run `work` on a driver thread, where it may not
  // call back into CUDA; waiting here keeps it on the caller's thread.
  synchronize(stream);
  work();
}

void GpuBackend::begin_capture(CUstream stream) {
  bind();
  // Thread-local mode: other threads may keep using the driver (polling
  // events, launching on their own streams) while this one records.
  check(Api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
}

CUgraphExec GpuBackend::end_capture(CUstream stream) {
  bind();
  CUgraph graph = nullptr;
  check(Api.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CUresult r = Api.cuGraphInstantiate(&exec, graph, 0);
  (void)Api.cuGraphDestroy(graph); // the executable graph does not need it
  check(r, "cuGraphInstantiate");
  return exec;
}

void GpuBackend::abort_capture(CUstream stream) noexcept {
  CUgraph graph = nullptr;
  if (Api.cuStreamEndCapture(stream, &graph) == CUDA_SUCCESS && graph)
    (void)Api.cuGraphDestroy(graph);
}

void GpuBackend::launch_graph(CUgraphExec graph, CUstream stream) {
  bind();
  check(Api.cuGraphLaunch(graph, stream), "cuGraphLaunch");
}

void GpuBackend::destroy_graph(CUgraphExec graph) noexcept { (void)Api.cuGraphExecDestroy(graph); }

} // namespace gpukit::rt::sched
