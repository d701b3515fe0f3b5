// Tasks: named groups of launches and transfers that the Scheduler admits,
// orders and accounts for. A TaskSpec says what a task needs (class of
// service, memory request and limit, priority, dependencies, pacing); a Task
// is the scheduler's record of one, moving through
//
//   Pending -> Admitted -> Running -> Completed | Failed | Cancelled
//
// with every transition checked against kLegalTransitions (an illegal one is
// an Error, never a silent no-op).
//
//   TaskId id = scheduler.submit({.name = "infer", .qos = QosClass::Guaranteed,
//                                 .memory_request = 2ull << 30});
//   Task& task = scheduler.task(id);   // stable address: launch paths hold it
//
// This file holds the vocabulary only; the Scheduler owns Tasks and makes
// every transition, the DispatchController does their launches.
#pragma once

#include "runtime/scheduler/clock.hpp"
#include "runtime/scheduler/stats.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::rt::sched {

/// Classes of service, best first. Guaranteed work launches on
/// high-priority streams, Burstable on normal ones, BestEffort on
/// low-priority streams and yields while Guaranteed work is in flight.
enum class QosClass : uint8_t { Guaranteed, Burstable, BestEffort };
inline constexpr size_t kQosClassCount = 3;
std::string_view to_string(QosClass qos);

enum class TaskState : uint8_t { Pending, Admitted, Running, Completed, Failed, Cancelled };
inline constexpr size_t kTaskStateCount = 6;
std::string_view to_string(TaskState state);

constexpr bool is_terminal(TaskState state) {
  return state == TaskState::Completed || state == TaskState::Failed || state == TaskState::Cancelled;
}

/// kLegalTransitions[from][to]. A task may fail or be cancelled from any
/// live state (a dependency failing fails a Pending task); it reaches
/// Completed only from Running; nothing leaves a terminal state.
inline constexpr bool kLegalTransitions[kTaskStateCount][kTaskStateCount] = {
    //            Pending Admitted Running Completed Failed Cancelled
    /*Pending  */ {false, true,    false,  false,    true,  true},
    /*Admitted */ {false, false,   true,   false,    true,  true},
    /*Running  */ {false, false,   false,  true,     true,  true},
    /*Completed*/ {false, false,   false,  false,    false, false},
    /*Failed   */ {false, false,   false,  false,    false, false},
    /*Cancelled*/ {false, false,   false,  false,    false, false},
};

constexpr bool is_legal_transition(TaskState from, TaskState to) {
  return kLegalTransitions[static_cast<size_t>(from)][static_cast<size_t>(to)];
}

/// "Admitted, Failed, Cancelled", or "none" from a terminal state.
std::string legal_transitions_from(TaskState from);

/// A task's number, unique within its Scheduler; 0 is no task.
struct TaskId {
  uint64_t value = 0;

  explicit operator bool() const { return value != 0; }
  friend bool operator==(TaskId, TaskId) = default;
  friend auto operator<=>(TaskId, TaskId) = default;
};

/// A pacing budget: a token bucket refilled with `amount` per `window`.
/// GpuTime buckets hold nanoseconds of measured kernel time (events), so
/// gpu_share(0.25) lets a task keep the GPU busy a quarter of the time;
/// Launches buckets hold launches.
struct PacingSpec {
  enum class Unit : uint8_t { GpuTime, Launches };

  Unit unit = Unit::GpuTime;
  uint64_t amount = 0;
  Nanos window = std::chrono::milliseconds(100);
  /// Bucket capacity: how far ahead a task may run after idling. 0: `amount`.
  uint64_t burst = 0;

  /// A share (0, 1] of GPU time, measured over `window`.
  static PacingSpec gpu_share(double share, Nanos window = std::chrono::milliseconds(100));
  /// At most `launches` per `window` on average.
  static PacingSpec launches_per(uint64_t launches, Nanos window);

  uint64_t capacity() const { return burst != 0 ? burst : amount; }
  /// "25% of GPU time per 100.00 ms", "1000 launches per 1.00 s".
  std::string describe() const;
};

inline constexpr uint64_t kNoMemoryLimit = UINT64_MAX;

struct TaskSpec {
  std::string name;
  QosClass qos = QosClass::Burstable;
  /// Device memory reserved for the task while it is admitted; admission
  /// waits until this much is unreserved.
  uint64_t memory_request = 0;
  /// The most the task may use at run time (>= memory_request). Use between
  /// request and limit is not reserved: it succeeds while the pool has room.
  uint64_t memory_limit = kNoMemoryLimit;
  /// Higher is admitted first within a class.
  int priority = 0;
  /// Tasks that must complete before this one is admitted.
  std::vector<TaskId> depends_on = {};
  std::optional<PacingSpec> pacing = std::nullopt;
  /// Time every kernel with events (GPU-time pacing does so regardless).
  bool record_timing = false;
};

/// Why a launch of a task is waiting in the dispatch controller right now.
enum class HoldReason : uint8_t { None, GuaranteedWork, Pacing };

/// What the dispatch controller counts for a task. Updated without locks
/// on the launch path, read by explain() and the statistics.
struct TaskCounters {
  std::atomic<uint64_t> launches{0};       ///< kernels, graph nodes included
  std::atomic<uint64_t> graph_launches{0}; ///< graph replays
  std::atomic<uint64_t> host_launches{0};  ///< host work ordered on the task's stream
  std::atomic<uint64_t> bytes_transferred{0};
  std::atomic<uint64_t> timed_kernels{0};
  std::atomic<int64_t> gpu_ns{0};          ///< measured kernel time
  std::atomic<uint64_t> holds{0};          ///< launches that had to wait
  std::atomic<int64_t> held_ns{0};
  std::atomic<HoldReason> holding{HoldReason::None};
};

class Scheduler;
struct DispatchLane;

class Task {
public:
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  TaskId id() const { return Id; }
  const std::string& name() const { return Spec.name; }
  const TaskSpec& spec() const { return Spec; }
  QosClass qos() const { return Spec.qos; }
  TaskState state() const { return State.load(std::memory_order_acquire); }
  Scheduler& scheduler() const { return *Owner; }

  /// Charges `bytes` of device memory to the task (the memory pool calls
  /// this for allocations made while the task is current). Throws
  /// Error{OutOfMemory} naming the task, its limit and request when the
  /// task would exceed its limit; Error{Usage} unless Admitted or Running.
  void charge_memory(uint64_t bytes);
  /// Returns memory charged earlier.
  void release_memory(uint64_t bytes);
  uint64_t memory_used() const { return MemoryUsed.load(std::memory_order_relaxed); }
  uint64_t memory_peak() const { return MemoryPeak.load(std::memory_order_relaxed); }

  TaskCounters& counters() { return Counters; }
  const TaskCounters& counters() const { return Counters; }
  /// Kernel times when the task is timed, else nullptr.
  LatencyHistogram* kernel_times() { return KernelTimes.get(); }
  const LatencyHistogram* kernel_times() const { return KernelTimes.get(); }

  /// "'infer' (#3)"
  std::string label() const;

private:
  friend class Scheduler;
  friend class DispatchController;
  friend class TaskScope;
  Task(Scheduler& owner, TaskId id, TaskSpec spec);

  Scheduler* Owner;
  TaskId Id;
  TaskSpec Spec;
  std::atomic<TaskState> State{TaskState::Pending};
  std::atomic<uint64_t> MemoryUsed{0};
  std::atomic<uint64_t> MemoryPeak{0};
  TaskCounters Counters;
  std::unique_ptr<LatencyHistogram> KernelTimes;
  /// The dispatch controller's per-task launch state, bound on first launch.
  std::atomic<DispatchLane*> Lane{nullptr};

  // Owned by the Scheduler, under its lock.
  uint64_t Sequence = 0;
  TimePoint Submitted{}, Admitted{}, Started{}, Finished{};
  TaskState FinishedFrom = TaskState::Pending;
  std::string Reason; ///< why it failed or was cancelled
  size_t UnmetDependencies = 0;
  std::vector<Task*> Prerequisites; ///< what it waits for (spec and add_dependency)
  std::vector<Task*> Dependents;    ///< who waits for it
  bool Reserved = false;
};

/// The task bound to the calling thread (TaskScope), or nullptr. The memory
/// pool charges allocations to it; Runtime::launch launches for it.
Task* current_task();
/// Binds `task` (may be nullptr) to the calling thread; returns the previous one.
Task* set_current_task(Task* task);

} // namespace gpukit::rt::sched
