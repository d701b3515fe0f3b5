// What the Scheduler tells people: explain(), the event log's lines, and the
// statistics per task and per class.
#include "runtime/scheduler/scheduler.hpp"

#include "runtime/scheduler/units.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

namespace gpukit::rt::sched {

std::string_view to_string(EventKind kind) {
  switch (kind) {
  case EventKind::Submitted: return "submitted";
  case EventKind::Rejected: return "rejected";
  case EventKind::Transition: return "transition";
  case EventKind::DependencyAdded: return "dependency";
  case EventKind::LimitExceeded: return "over limit";
  case EventKind::CapacityChanged: return "capacity";
  }
  llvm_unreachable("EventKind out of range");
}

std::string SchedulerEvent::describe() const {
  std::string who = task ? fmt::format("'{}' (#{})", task_name, task.value)
                         : (task_name.empty() ? std::string("-") : fmt::format("'{}'", task_name));
  std::string what = kind == EventKind::Transition
                         ? fmt::format("{} -> {}", to_string(from), to_string(to))
                         : std::string(to_string(kind));
  if (detail.empty())
    return fmt::format("{:>12}  {:<20}  {}", format_duration(time), who, what);
  return fmt::format("{:>12}  {:<20}  {:<22}  {}", format_duration(time), who, what, detail);
}

namespace {

std::string count_tasks(size_t n, std::string_view what) {
  return fmt::format("{} {} task{}", n, what, n == 1 ? "" : "s");
}

/// "2 Guaranteed tasks", "1 Guaranteed and 3 Burstable tasks".
std::string describe_ahead(const QueuePosition& pos) {
  std::vector<std::string> parts;
  for (size_t c = 0; c < kQosClassCount; ++c)
    if (pos.ahead[c] != 0)
      parts.push_back(fmt::format("{} {}", pos.ahead[c], to_string(static_cast<QosClass>(c))));
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i)
    joined += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return fmt::format("{} task{}", joined, pos.ahead_total() == 1 ? "" : "s");
}

std::string describe_limit(const TaskSpec& spec) {
  return spec.memory_limit == kNoMemoryLimit ? std::string("no limit")
                                             : fmt::format("limit {}", format_bytes(spec.memory_limit));
}

} // namespace

std::string Scheduler::explain(TaskId id) const {
  std::lock_guard lock(Mutex);
  return explain_locked(task_locked(id));
}

std::string Scheduler::explain_locked(const Task& t) const {
  TimePoint now = Clk->now();
  const TaskSpec& spec = t.spec();
  switch (t.state()) {
  case TaskState::Pending: {
    if (t.UnmetDependencies != 0) {
      std::string list;
      for (const Task* d : t.Prerequisites) {
        if (d->state() == TaskState::Completed)
          continue;
        list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", d->label(), to_string(d->state()));
      }
      return fmt::format("waiting for {}: {}", count_tasks(t.UnmetDependencies, "unfinished"), list);
    }
    std::optional<QueuePosition> pos = Admission.position(t.id());
    if (!pos)
      return "pending"; // between submit's steps; not observable from outside the lock
    std::string head = fmt::format("waiting: requests {}, {} unreserved of {}", format_bytes(spec.memory_request),
                                   format_bytes(Admission.unreserved()), format_bytes(Admission.capacity()));
    if (pos->ahead_total() == 0)
      return head + "; first in line";
    std::string text = fmt::format("{}; {} ahead", head, describe_ahead(*pos));
    if (spec.memory_request <= Admission.unreserved()) {
      const Task& first = task_locked(pos->head.id);
      text += fmt::format(" (first in line: {} needs {})", first.label(), format_bytes(pos->head.bytes));
    }
    return text;
  }
  case TaskState::Admitted:
    return fmt::format("admitted: {} reserved after waiting {}; ready to start", format_bytes(spec.memory_request),
                       format_duration(t.Admitted - t.Submitted));
  case TaskState::Running: {
    const TaskCounters& c = t.counters();
    std::string text = fmt::format("running for {}: {} launches, {} transferred, {} in use (request {}, {})",
                                   format_duration(now - t.Started), c.launches.load(),
                                   format_bytes(c.bytes_transferred.load()), format_bytes(t.memory_used()),
                                   format_bytes(spec.memory_request), describe_limit(spec));
    if (c.timed_kernels.load() != 0)
      text += fmt::format(", {} of GPU time", format_duration(Nanos(c.gpu_ns.load())));
    if (spec.pacing)
      text += fmt::format("; paced to {}", spec.pacing->describe());
    switch (c.holding.load()) {
    case HoldReason::None: break;
    case HoldReason::GuaranteedWork: text += "; held back now: Guaranteed work is in flight"; break;
    case HoldReason::Pacing: text += "; held back now: out of pacing budget"; break;
    }
    if (uint64_t holds = c.holds.load())
      text += fmt::format("; held back {} time{} for {} in all", holds, holds == 1 ? "" : "s",
                          format_duration(Nanos(c.held_ns.load())));
    return text;
  }
  case TaskState::Completed:
    return fmt::format("completed: ran {} after waiting {}; {} launches", format_duration(t.Finished - t.Started),
                       format_duration(t.Admitted - t.Submitted), t.counters().launches.load());
  case TaskState::Failed:
  case TaskState::Cancelled:
    return fmt::format("{} while {}{}{}", t.state() == TaskState::Failed ? "failed" : "cancelled",
                       to_string(t.FinishedFrom), t.Reason.empty() ? "" : ": ", t.Reason);
  }
  llvm_unreachable("TaskState out of range");
}

TaskStats Scheduler::stats(TaskId id) const {
  std::lock_guard lock(Mutex);
  return stats_locked(task_locked(id));
}

TaskStats Scheduler::stats_locked(const Task& t) const {
  TimePoint now = Clk->now();
  TaskState s = t.state();
  TaskStats st;
  st.id = t.id();
  st.name = t.name();
  st.qos = t.qos();
  st.state = s;
  // Admitted is set only on admission; a task that never got there waited
  // until it finished (or until now).
  st.admitted = s == TaskState::Admitted || s == TaskState::Running ||
                (is_terminal(s) && t.FinishedFrom != TaskState::Pending);
  st.started = s == TaskState::Running || (is_terminal(s) && t.FinishedFrom == TaskState::Running);
  if (st.admitted)
    st.wait = t.Admitted - t.Submitted;
  else
    st.wait = (is_terminal(s) ? t.Finished : now) - t.Submitted;
  if (st.started)
    st.run = (is_terminal(s) ? t.Finished : now) - t.Started;
  const TaskCounters& c = t.counters();
  st.launches = c.launches.load();
  st.graph_launches = c.graph_launches.load();
  st.bytes_transferred = c.bytes_transferred.load();
  st.memory_peak = t.memory_peak();
  st.gpu_time = Nanos(c.gpu_ns.load());
  st.timed_kernels = c.timed_kernels.load();
  if (const LatencyHistogram* h = t.kernel_times())
    st.kernel_time = h->summary();
  st.holds = c.holds.load();
  st.held = Nanos(c.held_ns.load());
  return st;
}

ClassStats Scheduler::class_stats(QosClass qos) const {
  std::lock_guard lock(Mutex);
  ClassStats cs;
  cs.qos = qos;
  std::vector<Nanos> waits, runs;
  for (const std::unique_ptr<Task>& t : Tasks) {
    if (t->qos() != qos)
      continue;
    ++cs.tasks;
    ++cs.by_state[static_cast<size_t>(t->state())];
    TaskStats st = stats_locked(*t);
    if (st.admitted)
      waits.push_back(st.wait);
    if (st.started)
      runs.push_back(st.run);
    cs.launches += st.launches;
    cs.bytes_transferred += st.bytes_transferred;
    cs.gpu_time += st.gpu_time;
  }
  cs.wait = summarize(std::move(waits));
  cs.run = summarize(std::move(runs));
  return cs;
}

void Scheduler::print_stats(llvm::raw_ostream& os) const {
  os << fmt::format("{:<11} {:>5} {:>7} {:>7} {:>5} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>10}\n", "class",
                    "tasks", "waiting", "running", "done", "wait p50", "wait p99", "run p50", "run p99", "launches",
                    "bytes", "GPU time");
  for (size_t c = 0; c < kQosClassCount; ++c) {
    ClassStats cs = class_stats(static_cast<QosClass>(c));
    size_t live = cs.by_state[size_t(TaskState::Pending)] + cs.by_state[size_t(TaskState::Admitted)];
    size_t done = cs.by_state[size_t(TaskState::Completed)] + cs.by_state[size_t(TaskState::Failed)] +
                  cs.by_state[size_t(TaskState::Cancelled)];
    os << fmt::format("{:<11} {:>5} {:>7} {:>7} {:>5} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>10}\n",
                      to_string(cs.qos), cs.tasks, live, cs.by_state[size_t(TaskState::Running)], done,
                      format_duration(cs.wait.p50), format_duration(cs.wait.p99), format_duration(cs.run.p50),
                      format_duration(cs.run.p99), cs.launches, format_bytes(cs.bytes_transferred),
                      format_duration(cs.gpu_time));
  }
  std::vector<TaskStats> all;
  {
    std::lock_guard lock(Mutex);
    for (const std::unique_ptr<Task>& t : Tasks)
      all.push_back(stats_locked(*t));
  }
  if (all.empty())
    return;
  os << fmt::format("\n{:>5} {:<20} {:<11} {:<10} {:>10} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10}\n", "id", "task",
                    "class", "state", "wait", "run", "launches", "bytes", "mem peak", "GPU time", "kernel p99");
  for (const TaskStats& st : all)
    os << fmt::format("{:>5} {:<20} {:<11} {:<10} {:>10} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10}\n", st.id.value,
                      st.name, to_string(st.qos), to_string(st.state), format_duration(st.wait),
                      format_duration(st.run), st.launches, format_bytes(st.bytes_transferred),
                      format_bytes(st.memory_peak), st.timed_kernels ? format_duration(st.gpu_time) : "-",
                      st.timed_kernels ? format_duration(st.kernel_time.p99) : "-");
}

void Scheduler::print_events(llvm::raw_ostream& os) const {
  for (const SchedulerEvent& e : events())
    os << e.describe() << "\n";
}

} // namespace gpukit::rt::sched
