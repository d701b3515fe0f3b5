// Graph capture and replay, for the many-small-kernels case: a sequence of
// launches is recorded once into a CUDA graph (cuStreamBeginCapture /
// EndCapture / GraphInstantiate) and then replayed with one cuGraphLaunch,
// which costs the host far less than launching each kernel again.
//
//   GraphRecorder recorder(dispatch);              // this thread now records
//   for (int i = 0; i < 20; ++i) dispatch.launch(nullptr, step, grid, block, 0, args[i]);
//   LaunchGraph graph = recorder.finish();
//   for (;;) graph.launch(task);                   // pacing and bounds still apply
//
// While a GraphRecorder is open, every DispatchController::launch the
// calling thread makes through its controller is recorded (whatever task it
// names) rather than run, and argument values are copied at that moment, as
// with cuLaunchKernel; other threads are unaffected. Replays run on the
// stream of the task they are launched for. Both types own their driver
// objects; launching needs the controller alive, destroying needs only the
// backend.
#pragma once

#include "runtime/scheduler/dispatch_backend.hpp"

#include <cstddef>

namespace gpukit::rt::sched {

class DispatchController;
class Task;

/// An instantiated graph; move-only, destroyed with its owner.
class LaunchGraph {
public:
  LaunchGraph() = default;
  LaunchGraph(LaunchGraph&& other) noexcept;
  LaunchGraph& operator=(LaunchGraph&& other) noexcept;
  ~LaunchGraph();

  /// Replays the graph for `task` (nullptr: the default lane).
  void launch(Task* task = nullptr) const;

  /// Kernels in the graph.
  size_t kernels() const { return Kernels; }
  explicit operator bool() const { return Exec != nullptr; }
  CUgraphExec handle() const { return Exec; }
  DispatchController& controller() const { return *Owner; }

private:
  friend class GraphRecorder;
  LaunchGraph(DispatchController& owner, DispatchBackend& backend, CUgraphExec exec, size_t kernels)
      : Owner(&owner), Backend(&backend), Exec(exec), Kernels(kernels) {}

  DispatchController* Owner = nullptr;
  /// Destroys the graph; held apart from Owner so a graph that outlives its
  /// controller (but not the backend) still releases cleanly.
  DispatchBackend* Backend = nullptr;
  CUgraphExec Exec = nullptr;
  size_t Kernels = 0;
};

/// Records the calling thread's launches through `controller` until
/// finish(); abandons the recording if destroyed first. One per thread at a time.
class GraphRecorder {
public:
  explicit GraphRecorder(DispatchController& controller);
  ~GraphRecorder();
  GraphRecorder(const GraphRecorder&) = delete;
  GraphRecorder& operator=(const GraphRecorder&) = delete;

  /// Records one launch (what DispatchController::launch does while this is open).
  void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args);
  /// Kernels recorded so far.
  size_t kernels() const { return Kernels; }
  /// Ends the recording and instantiates it.
  LaunchGraph finish();

  DispatchController& controller() const { return Owner; }

private:
  void close() noexcept;

  DispatchController& Owner;
  CUstream Stream = nullptr;
  size_t Kernels = 0;
  bool Open = false;
};

} // namespace gpukit::rt::sched
