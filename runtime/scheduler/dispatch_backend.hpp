// DispatchBackend: the device operations the DispatchController needs —
// streams with priorities, events, launches, graph capture — so one policy
// runs on the GPU (GpuBackend, the CUDA driver) and in the CPU simulation
// (SimBackend, host callbacks and simulated time) that CI tests it with.
//
//   GpuBackend gpu(*rt.driver(), rt.context());
//   DispatchController dispatch(gpu, clock, &scheduler, {.default_stream = rt.stream()});
//
// Handles are the driver's opaque types (CUstream, CUevent, CUfunction,
// CUgraphExec) on both backends; the simulation hands out pointers to its
// own objects under those types. Every call throws gpukit::Error on failure.
#pragma once

#include "runtime/scheduler/clock.hpp"

#include <cuda.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <string_view>

namespace gpukit::rt::sched {

/// A grid or block extent, as cuLaunchKernel takes them.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// Stream priorities as cuCtxGetStreamPriorityRange reports them:
/// numerically lower is more urgent, so `greatest` <= `least`. CUDA's
/// default priority is `least`.
struct StreamPriorities {
  int least = 0;
  int greatest = 0;
};

class DispatchBackend {
public:
  virtual ~DispatchBackend() = default;

  /// "gpu" or "simulation".
  virtual std::string_view name() const = 0;
  virtual StreamPriorities stream_priorities() = 0;
  /// A stream that does not synchronise with the legacy NULL stream.
  virtual CUstream create_stream(int priority) = 0;
  virtual void destroy_stream(CUstream stream) noexcept = 0;

  /// An event; `timing` events can be measured with elapsed(), others are
  /// cheaper to record and poll.
  virtual CUevent create_event(bool timing) = 0;
  virtual void destroy_event(CUevent event) noexcept = 0;
  virtual void record(CUevent event, CUstream stream) = 0;
  /// True when the work before the event's latest record has finished (or
  /// it was never recorded).
  virtual bool query(CUevent event) = 0;
  /// Blocks the calling thread until query() would be true.
  virtual void wait(CUevent event) = 0;
  /// Orders later work on `stream` after the event's latest record.
  virtual void stream_wait(CUstream stream, CUevent event) = 0;
  /// True when all work ordered on `stream` so far has finished.
  virtual bool query_stream(CUstream stream) = 0;
  /// Device time between two completed timing events.
  virtual Nanos elapsed(CUevent start, CUevent end) = 0;
  virtual void synchronize(CUstream stream) = 0;

  /// cuLaunchKernel.
  virtual void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream,
                      void** args) = 0;
  /// Runs `work` on the calling thread once the work ordered on `stream`
  /// before it has finished.
  virtual void launch_host(CUstream stream, llvm::function_ref<void()> work) = 0;

  /// Starts recording the launches made to `stream` from the calling thread
  /// into a graph instead of running them.
  virtual void begin_capture(CUstream stream) = 0;
  /// Stops recording and instantiates what was recorded.
  virtual CUgraphExec end_capture(CUstream stream) = 0;
  /// Stops recording and throws the recording away (for unwinding).
  virtual void abort_capture(CUstream stream) noexcept = 0;
  virtual void launch_graph(CUgraphExec graph, CUstream stream) = 0;
  virtual void destroy_graph(CUgraphExec graph) noexcept = 0;
};

} // namespace gpukit::rt::sched
