// The Scheduler's state machine: submission, dependencies, admission and
// transitions. explain(), statistics and printing are in scheduler_report.cpp.
#include "runtime/scheduler/scheduler.hpp"

#include "runtime/scheduler/units.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <cassert>

namespace gpukit::rt::sched {

namespace {

AdmissionRequest request_of(const Task& t) {
  return {t.id(), t.qos(), t.spec().priority, 0, t.spec().memory_request};
}

void validate(const TaskSpec& spec) {
  if (spec.memory_limit < spec.memory_request)
    throw Error(ErrorKind::Usage,
                fmt::format("task '{}' has a memory limit of {} below its request of {}; the limit is the "
                            "most it may use, so it must be at least the request",
                            spec.name, format_bytes(spec.memory_limit), format_bytes(spec.memory_request)));
  if (spec.pacing && (spec.pacing->amount == 0 || spec.pacing->window.count() <= 0))
    throw Error(ErrorKind::Usage,
                fmt::format("task '{}' has an empty pacing budget ({} per {} ns); build it with "
                            "PacingSpec::gpu_share() or PacingSpec::launches_per()",
                            spec.name, spec.pacing->amount, spec.pacing->window.count()));
}

} // namespace

Scheduler::Scheduler(SchedulerOptions options)
    : Clk(options.clock ? options.clock : &SteadyClock::instance()), Epoch(Clk->now()),
      EventLogCapacity(std::max<size_t>(options.event_log_capacity, 1)), Admission(options.memory_capacity) {}

Scheduler::~Scheduler() = default;

Task& Scheduler::task(TaskId id) const {
  std::lock_guard lock(Mutex);
  return task_locked(id);
}

Task& Scheduler::task_locked(TaskId id) const {
  if (id.value == 0 || id.value > Tasks.size())
    throw Error(ErrorKind::Usage, fmt::format("no task #{} in this scheduler ({} tasks were submitted)", id.value,
                                              Tasks.size()));
  return *Tasks[id.value - 1];
}

size_t Scheduler::task_count() const {
  std::lock_guard lock(Mutex);
  return Tasks.size();
}

uint64_t Scheduler::capacity() const {
  std::lock_guard lock(Mutex);
  return Admission.capacity();
}

uint64_t Scheduler::reserved() const {
  std::lock_guard lock(Mutex);
  return Admission.reserved();
}

size_t Scheduler::waiting() const {
  std::lock_guard lock(Mutex);
  return Admission.waiting();
}

TaskId Scheduler::submit(TaskSpec spec) {
  validate(spec);
  Notes notes;
  TaskId id;
  {
    std::lock_guard lock(Mutex);
    if (spec.name.empty())
      spec.name = fmt::format("task{}", Tasks.size() + 1);
    if (!Admission.could_ever_fit(spec.memory_request)) {
      std::string message = fmt::format(
          "task '{}' requests {} of device memory, more than the device can ever promise: {} (the memory "
          "pool's quota); lower TaskSpec::memory_request or raise the pool's quota",
          spec.name, format_bytes(spec.memory_request), format_bytes(Admission.capacity()));
      SchedulerEvent event;
      event.time = Clk->now() - Epoch;
      event.kind = EventKind::Rejected;
      event.task_name = spec.name;
      event.detail = message;
      Log.push_back(std::move(event));
      if (Log.size() > EventLogCapacity)
        Log.pop_front();
      throw Error(ErrorKind::OutOfMemory, message);
    }
    std::vector<Task*> prerequisites;
    for (TaskId dep : spec.depends_on) {
      if (dep.value == 0 || dep.value > Tasks.size())
        throw Error(ErrorKind::Usage, fmt::format("task '{}' depends on task #{}, which was never submitted",
                                                  spec.name, dep.value));
      Task* d = Tasks[dep.value - 1].get();
      if (std::find(prerequisites.begin(), prerequisites.end(), d) == prerequisites.end())
        prerequisites.push_back(d);
    }

    id = TaskId{Tasks.size() + 1};
    Tasks.push_back(std::unique_ptr<Task>(new Task(*this, id, std::move(spec))));
    Task& t = *Tasks.back();
    t.Sequence = NextSequence++;
    t.Submitted = Clk->now();
    log_locked(EventKind::Submitted, &t,
               fmt::format("{}, requests {} (limit {}), priority {}{}", to_string(t.qos()),
                           format_bytes(t.spec().memory_request),
                           t.spec().memory_limit == kNoMemoryLimit ? "none" : format_bytes(t.spec().memory_limit),
                           t.spec().priority,
                           prerequisites.empty() ? "" : fmt::format(", after {} tasks", prerequisites.size())));

    const Task* failed = nullptr;
    for (Task* d : prerequisites) {
      t.Prerequisites.push_back(d);
      TaskState s = d->state();
      if (s == TaskState::Completed)
        continue;
      if (is_terminal(s)) {
        failed = failed ? failed : d;
        continue;
      }
      d->Dependents.push_back(&t);
      ++t.UnmetDependencies;
    }
    if (failed)
      finish_locked(t, TaskState::Failed,
                    fmt::format("dependency {} is {}", failed->label(), to_string(failed->state())), notes);
    else if (t.UnmetDependencies == 0)
      enqueue_locked(t);
    admit_locked(notes);
  }
  notify(notes);
  return id;
}

void Scheduler::add_dependency(TaskId task_id, TaskId on_id) {
  Notes notes;
  {
    std::lock_guard lock(Mutex);
    Task& t = task_locked(task_id);
    Task& on = task_locked(on_id);
    if (&t == &on)
      throw Error(ErrorKind::Usage, fmt::format("task {} cannot depend on itself", t.label()));
    if (t.state() != TaskState::Pending)
      throw Error(ErrorKind::Usage,
                  fmt::format("cannot make task {} wait for {}: it is already {}, and dependencies can be "
                              "added only while a task is Pending",
                              t.label(), on.label(), to_string(t.state())));
    if (std::find(t.Prerequisites.begin(), t.Prerequisites.end(), &on) != t.Prerequisites.end())
      return; // already waits for it

    // A cycle exists when `t` is among the tasks `on` (transitively) waits
    // for. Depth-first over prerequisites, remembering how each was reached
    // so the message can spell the cycle out.
    llvm::DenseMap<const Task*, const Task*> reached_from{{&on, nullptr}};
    std::vector<const Task*> stack{&on};
    bool cycle = false;
    while (!stack.empty() && !cycle) {
      const Task* at = stack.back();
      stack.pop_back();
      for (const Task* next : at->Prerequisites) {
        if (reached_from.count(next))
          continue;
        reached_from[next] = at;
        if (next == &t) {
          cycle = true;
          break;
        }
        stack.push_back(next);
      }
    }
    if (cycle) {
      // Walk back from t to on: on -> ... -> t, each waiting for the next.
      std::vector<const Task*> path;
      for (const Task* at = &t; at; at = reached_from[at])
        path.push_back(at);
      std::reverse(path.begin(), path.end());
      std::string spelled = fmt::format("'{}'", t.name());
      for (const Task* p : path)
        spelled += fmt::format(" -> '{}'", p->name());
      throw Error(ErrorKind::Usage,
                  fmt::format("task {} cannot depend on {}: that closes the cycle {} (each waits for the next), "
                              "so none of them could ever run",
                              t.label(), on.label(), spelled));
    }

    t.Prerequisites.push_back(&on);
    log_locked(EventKind::DependencyAdded, &t, fmt::format("now waits for {} ({})", on.label(), to_string(on.state())));
    TaskState s = on.state();
    if (s == TaskState::Completed)
      return;
    if (is_terminal(s)) {
      finish_locked(t, TaskState::Failed, fmt::format("dependency {} is {}", on.label(), to_string(s)), notes);
    } else {
      on.Dependents.push_back(&t);
      ++t.UnmetDependencies;
      // It may have been first in line; whoever was behind it may go now.
      Admission.remove(t.Id);
    }
    admit_locked(notes);
  }
  notify(notes);
}

void Scheduler::start(TaskId id) {
  Notes notes;
  {
    std::lock_guard lock(Mutex);
    Task& t = task_locked(id);
    transition_locked(t, TaskState::Running, {}, notes);
  }
  notify(notes);
}

void Scheduler::complete(TaskId id) {
  Notes notes;
  {
    std::lock_guard lock(Mutex);
    finish_locked(task_locked(id), TaskState::Completed, {}, notes);
  }
  notify(notes);
}

void Scheduler::fail(TaskId id, std::string_view reason) {
  Notes notes;
  {
    std::lock_guard lock(Mutex);
    finish_locked(task_locked(id), TaskState::Failed, std::string(reason), notes);
  }
  notify(notes);
}

void Scheduler::cancel(TaskId id, std::string_view reason) {
  Notes notes;
  {
    std::lock_guard lock(Mutex);
    finish_locked(task_locked(id), TaskState::Cancelled, std::string(reason), notes);
  }
  notify(notes);
}

TaskState Scheduler::wait_admitted(TaskId id) {
  std::unique_lock lock(Mutex);
  Task& t = task_locked(id);
  Changed.wait(lock, [&] { return t.state() != TaskState::Pending; });
  return t.state();
}

TaskState Scheduler::wait_finished(TaskId id) {
  std::unique_lock lock(Mutex);
  Task& t = task_locked(id);
  Changed.wait(lock, [&] { return is_terminal(t.state()); });
  return t.state();
}

void Scheduler::set_capacity(uint64_t bytes) {
  Notes notes;
  {
    std::lock_guard lock(Mutex);
    log_locked(EventKind::CapacityChanged, nullptr,
               fmt::format("{} -> {} ({} reserved)", format_bytes(Admission.capacity()), format_bytes(bytes),
                           format_bytes(Admission.reserved())));
    Admission.set_capacity(bytes);
    for (const AdmissionRequest& r : Admission.take_unsatisfiable())
      finish_locked(task_locked(r.id), TaskState::Failed,
                    fmt::format("it requests {}, more than the device can now ever promise: {} (the memory "
                                "pool's quota shrank)",
                                format_bytes(r.bytes), format_bytes(bytes)),
                    notes);
    admit_locked(notes);
  }
  notify(notes);
}

void Scheduler::enqueue_locked(Task& t) {
  AdmissionRequest r = request_of(t);
  r.sequence = t.Sequence;
  Admission.enqueue(r);
}

void Scheduler::admit_locked(Notes& notes) {
  for (const AdmissionRequest& r : Admission.admit()) {
    Task& t = task_locked(r.id);
    t.Reserved = true;
    transition_locked(t, TaskState::Admitted,
                      fmt::format("reserved {}, {} unreserved of {}", format_bytes(r.bytes),
                                  format_bytes(Admission.unreserved()), format_bytes(Admission.capacity())),
                      notes);
  }
}

void Scheduler::transition_locked(Task& t, TaskState to, std::string detail, Notes& notes) {
  TaskState from = t.state();
  if (!is_legal_transition(from, to))
    throw_illegal_locked(t, to);
  TimePoint now = Clk->now();
  switch (to) {
  case TaskState::Pending: llvm_unreachable("nothing returns to Pending");
  case TaskState::Admitted: t.Admitted = now; break;
  case TaskState::Running: t.Started = now; break;
  case TaskState::Completed:
  case TaskState::Failed:
  case TaskState::Cancelled:
    t.Finished = now;
    t.FinishedFrom = from;
    break;
  }
  t.State.store(to, std::memory_order_release);
  log_locked(EventKind::Transition, &t, std::move(detail), from, to);
  notes.push_back({&t, from, to});
  Changed.notify_all();
}

void Scheduler::finish_locked(Task& first, TaskState to, std::string reason, Notes& notes) {
  // Dependents of a task that did not complete fail too; a worklist rather
  // than recursion, since chains can be long.
  std::vector<std::pair<Task*, std::string>> work{{&first, std::move(reason)}};
  TaskState state = to;
  while (!work.empty()) {
    auto [t, why] = std::move(work.back());
    work.pop_back();
    TaskState from = t->state();
    if (!is_legal_transition(from, state))
      throw_illegal_locked(*t, state);
    if (from == TaskState::Pending)
      Admission.remove(t->Id);
    if (t->Reserved) {
      Admission.release(t->spec().memory_request);
      t->Reserved = false;
    }
    t->Reason = why;
    std::string detail = why;
    if (t->memory_used() != 0)
      detail += fmt::format("{}{} still charged", detail.empty() ? "" : "; ", format_bytes(t->memory_used()));
    transition_locked(*t, state, std::move(detail), notes);

    for (Task* d : t->Dependents) {
      if (d->state() != TaskState::Pending)
        continue; // only Pending tasks have unmet dependencies
      if (state == TaskState::Completed) {
        assert(d->UnmetDependencies > 0);
        if (--d->UnmetDependencies == 0)
          enqueue_locked(*d);
        continue;
      }
      work.emplace_back(d, fmt::format("dependency {} {}", t->label(),
                                       state == TaskState::Failed ? "failed" : "was cancelled"));
    }
    // Everything after the first task is a dependent failing.
    state = TaskState::Failed;
  }
  admit_locked(notes);
}

void Scheduler::throw_illegal_locked(const Task& t, TaskState to) const {
  TaskState from = t.state();
  std::string hint;
  if (from == TaskState::Pending && to == TaskState::Running)
    hint = "; call wait_admitted() first";
  else if (from == TaskState::Admitted && to == TaskState::Completed)
    hint = "; call start() first";
  throw Error(ErrorKind::Usage,
              fmt::format("task {} cannot go from {} to {}: from {} it may go to {} (it is {}){}", t.label(),
                          to_string(from), to_string(to), to_string(from), legal_transitions_from(from),
                          explain_locked(t), hint));
}

void Scheduler::log_locked(EventKind kind, const Task* t, std::string detail, TaskState from, TaskState to) {
  SchedulerEvent event;
  event.time = Clk->now() - Epoch;
  event.kind = kind;
  if (t) {
    event.task = t->id();
    event.task_name = t->name();
  }
  event.from = from;
  event.to = to;
  event.detail = std::move(detail);
  Log.push_back(std::move(event));
  if (Log.size() > EventLogCapacity)
    Log.pop_front();
}

void Scheduler::note_limit_exceeded(Task& t, uint64_t used, uint64_t bytes) {
  std::lock_guard lock(Mutex);
  log_locked(EventKind::LimitExceeded, &t,
             fmt::format("allocating {} on top of {} exceeds the limit of {}", format_bytes(bytes),
                         format_bytes(used), format_bytes(t.spec().memory_limit)));
}

std::vector<SchedulerEvent> Scheduler::events() const {
  std::lock_guard lock(Mutex);
  return {Log.begin(), Log.end()};
}

void Scheduler::add_observer(TaskObserver* observer) {
  std::unique_lock lock(ObserversMutex);
  Observers.push_back(observer);
}

void Scheduler::remove_observer(TaskObserver* observer) {
  std::unique_lock lock(ObserversMutex);
  Observers.erase(std::remove(Observers.begin(), Observers.end(), observer), Observers.end());
}

void Scheduler::notify(const Notes& notes) {
  if (notes.empty())
    return;
  std::shared_lock lock(ObserversMutex);
  for (const Notification& n : notes)
    for (TaskObserver* o : Observers)
      o->on_transition(*n.task, n.from, n.to);
}

} // namespace gpukit::rt::sched
