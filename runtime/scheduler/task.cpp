#include "runtime/scheduler/task.hpp"

#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/units.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <cmath>

namespace gpukit::rt::sched {

std::string_view to_string(QosClass qos) {
  switch (qos) {
  case QosClass::Guaranteed: return "Guaranteed";
  case QosClass::Burstable: return "Burstable";
  case QosClass::BestEffort: return "BestEffort";
  }
  llvm_unreachable("QosClass out of range");
}

std::string_view to_string(TaskState state) {
  switch (state) {
  case TaskState::Pending: return "Pending";
  case TaskState::Admitted: return "Admitted";
  case TaskState::Running: return "Running";
  case TaskState::Completed: return "Completed";
  case TaskState::Failed: return "Failed";
  case TaskState::Cancelled: return "Cancelled";
  }
  llvm_unreachable("TaskState out of range");
}

std::string legal_transitions_from(TaskState from) {
  std::string list;
  for (size_t to = 0; to < kTaskStateCount; ++to) {
    if (!is_legal_transition(from, static_cast<TaskState>(to)))
      continue;
    if (!list.empty())
      list += ", ";
    list += to_string(static_cast<TaskState>(to));
  }
  return list.empty() ? "none" : list;
}

PacingSpec PacingSpec::gpu_share(double share, Nanos window) {
  if (!(share > 0.0 && share <= 1.0))
    throw Error(ErrorKind::Usage,
                fmt::format("a GPU share must be in (0, 1], got {}; 0.25 lets a task use a quarter of GPU time",
                            share));
  if (window.count() <= 0)
    throw Error(ErrorKind::Usage, fmt::format("a pacing window must be positive, got {} ns", window.count()));
  PacingSpec spec;
  spec.unit = Unit::GpuTime;
  spec.window = window;
  spec.amount = static_cast<uint64_t>(std::llround(share * static_cast<double>(window.count())));
  if (spec.amount == 0)
    spec.amount = 1;
  return spec;
}

PacingSpec PacingSpec::launches_per(uint64_t launches, Nanos window) {
  if (launches == 0 || window.count() <= 0)
    throw Error(ErrorKind::Usage,
                fmt::format("launch pacing needs a positive count and window, got {} launches per {} ns",
                            launches, window.count()));
  PacingSpec spec;
  spec.unit = Unit::Launches;
  spec.amount = launches;
  spec.window = window;
  return spec;
}

std::string PacingSpec::describe() const {
  switch (unit) {
  case Unit::GpuTime:
    return fmt::format("{:.3g}% of GPU time per {}",
                       100.0 * static_cast<double>(amount) / static_cast<double>(window.count()),
                       format_duration(window));
  case Unit::Launches:
    return fmt::format("{} launches per {}", amount, format_duration(window));
  }
  llvm_unreachable("PacingSpec::Unit out of range");
}

Task::Task(Scheduler& owner, TaskId id, TaskSpec spec) : Owner(&owner), Id(id), Spec(std::move(spec)) {
  bool timed = Spec.record_timing || (Spec.pacing && Spec.pacing->unit == PacingSpec::Unit::GpuTime);
  if (timed)
    KernelTimes = std::make_unique<LatencyHistogram>();
}

std::string Task::label() const { return fmt::format("'{}' (#{})", Spec.name, Id.value); }

void Task::charge_memory(uint64_t bytes) {
  TaskState s = state();
  if (s != TaskState::Admitted && s != TaskState::Running)
    throw Error(ErrorKind::Usage,
                fmt::format("cannot charge {} of memory to task {}: it is {}, and memory belongs to a task "
                            "only while it is Admitted or Running",
                            format_bytes(bytes), label(), to_string(s)));
  uint64_t used = MemoryUsed.load(std::memory_order_relaxed);
  for (;;) {
    bool over = bytes > Spec.memory_limit || used > Spec.memory_limit - bytes;
    if (over) {
      Owner->note_limit_exceeded(*this, used, bytes);
      throw Error(ErrorKind::OutOfMemory,
                  fmt::format("task {} exceeded its memory limit: allocating {} on top of the {} it uses "
                              "would reach {}, over its limit of {} (its request is {}); raise "
                              "TaskSpec::memory_limit or free memory first",
                              label(), format_bytes(bytes), format_bytes(used), format_bytes(used + bytes),
                              format_bytes(Spec.memory_limit), format_bytes(Spec.memory_request)));
    }
    if (MemoryUsed.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed))
      break;
  }
  uint64_t now = used + bytes;
  uint64_t peak = MemoryPeak.load(std::memory_order_relaxed);
  while (now > peak && !MemoryPeak.compare_exchange_weak(peak, now, std::memory_order_relaxed))
    ;
}

void Task::release_memory(uint64_t bytes) {
  uint64_t used = MemoryUsed.load(std::memory_order_relaxed);
  do {
    if (bytes > used)
      throw Error(ErrorKind::Internal,
                  fmt::format("task {} releases {} of memory but only {} is charged to it", label(),
                              format_bytes(bytes), format_bytes(used)));
  } while (!MemoryUsed.compare_exchange_weak(used, used - bytes, std::memory_order_relaxed));
}

namespace {
thread_local Task* tCurrentTask = nullptr;
} // namespace

Task* current_task() { return tCurrentTask; }

Task* set_current_task(Task* task) {
  Task* previous = tCurrentTask;
  tCurrentTask = task;
  return previous;
}

} // namespace gpukit::rt::sched
