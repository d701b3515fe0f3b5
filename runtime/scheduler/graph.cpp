#include "runtime/scheduler/graph.hpp"

#include "runtime/scheduler/dispatch_controller.hpp"
#include "support/error.hpp"

#include <utility>

namespace gpukit::rt::sched {

LaunchGraph::LaunchGraph(LaunchGraph&& other) noexcept
    : Owner(std::exchange(other.Owner, nullptr)), Backend(std::exchange(other.Backend, nullptr)),
      Exec(std::exchange(other.Exec, nullptr)),
      Kernels(std::exchange(other.Kernels, 0)) {}

LaunchGraph& LaunchGraph::operator=(LaunchGraph&& other) noexcept {
  if (this != &other) {
    LaunchGraph old(std::move(*this));
    Owner = std::exchange(other.Owner, nullptr);
    Backend = std::exchange(other.Backend, nullptr);
    Exec = std::exchange(other.Exec, nullptr);
    Kernels = std::exchange(other.Kernels, 0);
  }
  return *this;
}

LaunchGraph::~LaunchGraph() {
  if (Exec)
    Backend->destroy_graph(Exec);
}

void LaunchGraph::launch(Task* task) const {
  if (!Exec)
    throw Error(ErrorKind::Usage, "launch of an empty LaunchGraph (moved from, or never captured)");
  Owner->launch_graph(task, *this);
}

GraphRecorder::GraphRecorder(DispatchController& controller) : Owner(controller) {
  if (GraphRecorder* previous = DispatchController::exchange_recorder(nullptr)) {
    DispatchController::exchange_recorder(previous);
    throw Error(ErrorKind::Usage, "this thread is already capturing a graph; finish() that GraphRecorder "
                                  "before opening another");
  }
  DispatchBackend& backend = Owner.backend();
  // Capture needs a stream of its own: the legacy NULL stream cannot be
  // captured, and a task's stream may carry other threads' work.
  Stream = backend.create_stream(backend.stream_priorities().least);
  try {
    backend.begin_capture(Stream);
  } catch (...) {
    backend.destroy_stream(Stream);
    throw;
  }
  Open = true;
  DispatchController::exchange_recorder(this);
}

GraphRecorder::~GraphRecorder() {
  close();
  Owner.backend().destroy_stream(Stream);
}

void GraphRecorder::close() noexcept {
  if (!Open)
    return;
  Open = false;
  DispatchController::exchange_recorder(nullptr);
  Owner.backend().abort_capture(Stream);
}

void GraphRecorder::launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args) {
  if (!Open)
    throw Error(ErrorKind::Usage, "launch on a GraphRecorder that was already finished");
  Owner.backend().launch(function, grid, block, shared_bytes, Stream, args);
  ++Kernels;
}

LaunchGraph GraphRecorder::finish() {
  if (!Open)
    throw Error(ErrorKind::Usage, "GraphRecorder::finish() called twice");
  Open = false;
  DispatchController::exchange_recorder(nullptr);
  CUgraphExec exec = Owner.backend().end_capture(Stream);
  return LaunchGraph(Owner, Owner.backend(), exec, Kernels);
}

} // namespace gpukit::rt::sched
