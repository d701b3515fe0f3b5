// DispatchController: the single place that launches kernels. For each
// launch it picks the task's stream (Guaranteed: high priority, Burstable:
// normal, BestEffort: low), holds BestEffort launches back while Guaranteed
// work is in flight, applies the task's pacing budget (a token bucket on
// measured kernel time or on launch count), bounds the launches in flight
// with a ring of events, and times kernels with events when asked. It never
// holds a lock across a driver call.
//
//   DispatchController dispatch(gpu, clock, &scheduler, {.default_stream = rt.stream()});
//   dispatch.launch(nullptr, fn, {grid}, {256}, 0, args);        // default lane
//   TaskScope scope(dispatch, scheduler.task(id));               // this thread works for `id`
//   dispatch.launch(current_task(), fn, {grid}, {256}, 0, args); // on the task's stream
//
// The hot path (no task, or an unpaced untimed Guaranteed or Burstable
// task) is an atomic increment, one pointer load, the driver call and every
// 64th launch an event record: no allocation, no map lookup, no lock. Launches without a task go to `default_stream`, so
// they stay ordered with the runtime's copies on that stream.
//
// A task's launch state (its "lane") is bound on its first launch while it
// is Running, and drained and recycled when the Scheduler finishes it:
// Scheduler::complete() therefore returns once the task's GPU work is done.
#pragma once

#include "runtime/runtime.hpp"
#include "runtime/scheduler/clock.hpp"
#include "runtime/scheduler/dispatch_backend.hpp"
#include "runtime/scheduler/event_ring.hpp"
#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/stats.hpp"
#include "runtime/scheduler/task.hpp"

#include <llvm/ADT/STLFunctionalExtras.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace gpukit::rt::sched {

struct DispatchOptions {
  /// Where launches without a task go: the runtime's stream. nullptr: the
  /// legacy NULL stream on the GPU, the backend's default stream in the
  /// simulation.
  CUstream default_stream = nullptr;
  /// Streams per class of service; tasks of a class share them round-robin.
  unsigned streams_per_class = 2;
  /// Launches a lane (Guaranteed, Burstable, the default) may have queued
  /// before launch() waits for the oldest.
  unsigned max_in_flight = 1024;
  /// The same for BestEffort lanes: small, so bulk work never queues deep.
  unsigned best_effort_in_flight = 4;
  /// Launches of a timed lane whose timing events are outstanding.
  unsigned timing_slots = 64;
  /// Launches of a lane paced by GPU time that may be in flight unmeasured:
  /// shallow, so measurements come back before the budget is overspent.
  unsigned paced_in_flight = 2;
  /// How often a held BestEffort launch looks again at Guaranteed work.
  Nanos best_effort_poll = std::chrono::microseconds(20);
  /// The longest a BestEffort launch is held for Guaranteed work; then it
  /// goes anyway, so a steady Guaranteed load cannot starve BestEffort.
  Nanos best_effort_max_hold = std::chrono::milliseconds(50);
  /// Time every launch without a task.
  bool time_default_lane = false;
};

class LaunchGraph;
class GraphRecorder;

class DispatchController final : private TaskObserver {
public:
  /// `scheduler` may be nullptr when only the default lane is used. The
  /// controller must be destroyed before the scheduler and the backend.
  DispatchController(DispatchBackend& backend, Clock& clock, Scheduler* scheduler = nullptr,
                     DispatchOptions options = {});
  ~DispatchController() override;
  DispatchController(const DispatchController&) = delete;
  DispatchController& operator=(const DispatchController&) = delete;

  /// Launches `function` for `task` (nullptr: the default lane), arguments
  /// as cuLaunchKernel takes them. Throws Error{Usage} when the task is not
  /// Running. May wait: for the in-flight bound, the task's pacing budget,
  /// and (BestEffort) for Guaranteed work in flight. On a thread that is
  /// capturing a graph (GraphRecorder), the launch is recorded instead.
  void launch(Task* task, CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args);
  void launch(Task* task, CUfunction function, LaunchShape shape, void** args) {
    launch(task, function, Dim3{shape.grid}, Dim3{shape.block}, shape.shared_bytes, args);
  }
  /// Replays a captured graph for `task`, with the task's stream, pacing and bounds.
  void launch_graph(Task* task, const LaunchGraph& graph);
  /// Runs `work` on this thread after the work ordered on the task's
  /// stream, under the same policy (the CPU fallback's launches).
  void launch_host(Task* task, llvm::function_ref<void()> work);

  /// The stream the task's work is ordered on (copies for a task go here).
  CUstream stream_for(Task* task);
  /// Counts a transfer made for `task` on stream_for(task).
  void note_transfer(Task* task, uint64_t bytes);
  /// Waits for the task's launches and collects their timings.
  void synchronize(Task* task);
  /// Collects the timings of finished launches of every lane without waiting.
  void poll();

  /// Counters and kernel times of launches without a task.
  const TaskCounters& default_counters() const { return DefaultCounters; }
  const LatencyHistogram& default_kernel_times() const { return DefaultKernelTimes; }

  /// The stream priority of each class: Guaranteed the greatest, BestEffort
  /// the least (CUDA's default), Burstable midway.
  int priority_of(QosClass qos) const { return ClassPriority[static_cast<size_t>(qos)]; }
  DispatchBackend& backend() const { return Backend; }
  Clock& clock() const { return Clk; }
  const DispatchOptions& options() const { return Opts; }

private:
  friend class GraphRecorder;
  friend class TaskScope;
  struct Work;
  using Lane = DispatchLane;

  Lane& lane_for(Task* task);
  Lane& bind(Task& task);
  /// Lanes are recycled among tasks of the same class and kind.
  enum class LaneKind : uint8_t { Plain, Timed, Paced };
  static constexpr size_t kLaneKinds = 3;
  static LaneKind kind_of(const Task& task);
  std::unique_ptr<Lane> make_lane(QosClass qos, LaneKind kind, CUstream stream);
  Lane* take_lane(QosClass qos, LaneKind kind);
  void configure(Lane& lane, Task* task);
  void release(Lane& lane);
  void on_transition(Task& task, TaskState from, TaskState to) override;

  void dispatch(Lane& lane, const Work& work);
  void run(const Work& work, CUstream stream);
  void mark_in_flight(Lane& lane);
  void drain(Lane& lane);
  void retired(Lane& lane, EventRing::Slot& slot);
  Nanos pace(Lane& lane, uint64_t launches);
  void yield_to_guaranteed(Lane& lane);
  bool guaranteed_busy();
  void end_hold(Lane& lane, TimePoint since);
  /// Makes `recorder` the calling thread's capture; returns the previous one.
  static GraphRecorder* exchange_recorder(GraphRecorder* recorder);

  DispatchBackend& Backend;
  Clock& Clk;
  Scheduler* Sched;
  DispatchOptions Opts;
  std::array<int, kQosClassCount> ClassPriority{};
  std::array<std::vector<CUstream>, kQosClassCount> ClassStreams;
  std::array<std::atomic<uint64_t>, kQosClassCount> NextStream{};

  TaskCounters DefaultCounters;
  LatencyHistogram DefaultKernelTimes;
  std::unique_ptr<Lane> Default;

  std::mutex LanesMutex; ///< never held across a driver call
  std::deque<std::unique_ptr<Lane>> Lanes;
  std::array<std::array<std::vector<Lane*>, kLaneKinds>, kQosClassCount> FreeLanes; ///< [qos][kind]

  /// Bound Guaranteed lanes; BestEffort launches look at the Guaranteed
  /// streams only while there are any.
  std::atomic<size_t> GuaranteedCount{0};
};

/// Binds `task` to the calling thread for the scope's life: current_task()
/// returns it (Runtime::launch and the memory pool follow it), the task's
/// stream first waits for the work already on the default stream, and on
/// exit the default stream waits for the task's work, so arrays made outside
/// the scope are safe to use inside it and the other way round.
class TaskScope {
public:
  TaskScope(DispatchController& dispatch, Task& task);
  ~TaskScope();
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;

private:
  DispatchController& Dispatch;
  Task& Bound;
  Task* Previous;
};

} // namespace gpukit::rt::sched
