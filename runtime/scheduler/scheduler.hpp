// Scheduler: admits tasks against the device's memory, orders them by class
// and priority, resolves their dependencies, checks every state transition,
// and keeps an event log and statistics. It decides *whether* a task may
// run; the DispatchController decides *how* its launches reach the GPU.
//
//   Scheduler scheduler({.memory_capacity = pool.quota()});
//   TaskId id = scheduler.submit({.name = "infer", .qos = QosClass::Guaranteed,
//                                 .memory_request = 2ull << 30});
//   scheduler.wait_admitted(id);  scheduler.start(id);
//   ... launches through the DispatchController ...
//   scheduler.complete(id);
//   llvm::outs() << scheduler.explain(id) << "\n";
//
// Admission is automatic: submit() and every reservation that comes back
// admit waiting tasks in order. A request larger than the capacity is
// rejected at submit() with the numbers. Thread-safe throughout; one mutex
// guards the state and is never held while observers run.
#pragma once

#include "runtime/scheduler/admission.hpp"
#include "runtime/scheduler/clock.hpp"
#include "runtime/scheduler/stats.hpp"
#include "runtime/scheduler/task.hpp"

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace gpukit::rt::sched {

struct SchedulerOptions {
  /// Bytes the device can promise to tasks: the memory pool's quota.
  uint64_t memory_capacity = 0;
  /// nullptr: SteadyClock::instance().
  Clock* clock = nullptr;
  /// Events the log keeps; the oldest go first.
  size_t event_log_capacity = 4096;
};

enum class EventKind : uint8_t {
  Submitted,       ///< a task entered as Pending
  Rejected,        ///< submit() refused a task (no task was created)
  Transition,      ///< a task changed state
  DependencyAdded, ///< add_dependency()
  LimitExceeded,   ///< a task's allocation went over its memory limit
  CapacityChanged, ///< set_capacity()
};
std::string_view to_string(EventKind kind);

struct SchedulerEvent {
  Nanos time{0}; ///< since the scheduler was created
  EventKind kind = EventKind::Submitted;
  TaskId task;
  std::string task_name;
  TaskState from = TaskState::Pending; ///< Transition only
  TaskState to = TaskState::Pending;   ///< Transition only
  std::string detail;

  /// "   12.35 ms  'infer' (#3)  Pending -> Admitted  reserved 2.0 GiB, ..."
  std::string describe() const;
};

/// One task's numbers. Wait is submission to admission (dependencies
/// included); run is start to finish. Both run on to "now" while unfinished.
struct TaskStats {
  TaskId id;
  std::string name;
  QosClass qos = QosClass::Burstable;
  TaskState state = TaskState::Pending;
  bool admitted = false; ///< it got a reservation (now or earlier)
  bool started = false;  ///< it ran (now or earlier)
  Nanos wait{0};
  Nanos run{0};
  uint64_t launches = 0;
  uint64_t graph_launches = 0;
  uint64_t bytes_transferred = 0;
  uint64_t memory_peak = 0;
  Nanos gpu_time{0};       ///< measured kernel time (timed tasks only)
  uint64_t timed_kernels = 0;
  Summary kernel_time;     ///< per-kernel time (timed tasks only)
  uint64_t holds = 0;
  Nanos held{0};
};

/// The numbers of all tasks of one class.
struct ClassStats {
  QosClass qos = QosClass::Burstable;
  size_t tasks = 0;
  std::array<size_t, kTaskStateCount> by_state{};
  Summary wait; ///< over tasks that were admitted
  Summary run;  ///< over tasks that started
  uint64_t launches = 0;
  uint64_t bytes_transferred = 0;
  Nanos gpu_time{0};
};

/// Told of every transition, after the fact, outside the scheduler's lock,
/// on the thread that caused it. The DispatchController uses it to drain
/// and recycle a finished task's launch state.
class TaskObserver {
public:
  virtual ~TaskObserver() = default;
  virtual void on_transition(Task& task, TaskState from, TaskState to) = 0;
};

class Scheduler {
public:
  explicit Scheduler(SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Enters a task as Pending and admits it at once when it can be. Throws
  /// Error{OutOfMemory} when its request exceeds the capacity (it could
  /// never be admitted), Error{Usage} for a malformed spec or an unknown
  /// dependency. A task whose dependency already failed fails right away.
  TaskId submit(TaskSpec spec);
  /// Makes Pending `task` wait for `on` as well. Throws Error{Usage} when
  /// `task` is no longer Pending or the edge would close a cycle (the
  /// message spells the cycle out).
  void add_dependency(TaskId task, TaskId on);

  /// Admitted -> Running.
  void start(TaskId id);
  /// Running -> Completed; returns the reservation.
  void complete(TaskId id);
  /// Any live state -> Failed; Pending dependents fail with it.
  void fail(TaskId id, std::string_view reason);
  /// Any live state -> Cancelled; Pending dependents fail with it.
  void cancel(TaskId id, std::string_view reason = {});

  /// Blocks while the task is Pending; returns the state it left Pending for.
  TaskState wait_admitted(TaskId id);
  /// Blocks until the task is Completed, Failed or Cancelled.
  TaskState wait_finished(TaskId id);

  /// The task; its address is stable for the scheduler's life.
  Task& task(TaskId id) const;
  TaskState state(TaskId id) const { return task(id).state(); }
  size_t task_count() const;

  /// Why the task is where it is: "waiting: requests 6.0 GiB, 4.2 GiB
  /// unreserved of 79.1 GiB; 2 Guaranteed tasks ahead".
  std::string explain(TaskId id) const;
  std::vector<SchedulerEvent> events() const;
  TaskStats stats(TaskId id) const;
  ClassStats class_stats(QosClass qos) const;
  /// A table per class and per task.
  void print_stats(llvm::raw_ostream& os) const;
  void print_events(llvm::raw_ostream& os) const;

  uint64_t capacity() const;
  /// Sum of the requests of Admitted and Running tasks.
  uint64_t reserved() const;
  /// Tasks waiting for memory (not those waiting for dependencies).
  size_t waiting() const;
  /// Changes the capacity (the pool's quota changed). Waiting tasks that can
  /// now never fit fail with the numbers; others may be admitted.
  void set_capacity(uint64_t bytes);

  Clock& clock() const { return *Clk; }

  void add_observer(TaskObserver* observer);
  void remove_observer(TaskObserver* observer);

private:
  friend class Task;
  struct Notification {
    Task* task;
    TaskState from, to;
  };
  using Notes = std::vector<Notification>;

  Task& task_locked(TaskId id) const;
  void transition_locked(Task& t, TaskState to, std::string detail, Notes& notes);
  void finish_locked(Task& t, TaskState to, std::string reason, Notes& notes);
  void admit_locked(Notes& notes);
  void enqueue_locked(Task& t);
  void log_locked(EventKind kind, const Task* t, std::string detail, TaskState from = TaskState::Pending,
                  TaskState to = TaskState::Pending);
  [[noreturn]] void throw_illegal_locked(const Task& t, TaskState to) const;
  std::string explain_locked(const Task& t) const;
  TaskStats stats_locked(const Task& t) const;
  void notify(const Notes& notes);
  void note_limit_exceeded(Task& t, uint64_t used, uint64_t bytes);

  Clock* Clk;
  TimePoint Epoch;
  size_t EventLogCapacity;

  mutable std::mutex Mutex;
  std::condition_variable Changed;
  AdmissionQueue Admission;
  std::vector<std::unique_ptr<Task>> Tasks; ///< Tasks[id - 1]
  std::deque<SchedulerEvent> Log;
  uint64_t NextSequence = 1;

  mutable std::shared_mutex ObserversMutex;
  std::vector<TaskObserver*> Observers;
};

} // namespace gpukit::rt::sched
