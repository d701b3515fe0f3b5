#include "runtime/scheduler/dispatch_controller.hpp"

#include "runtime/scheduler/graph.hpp"
#include "runtime/scheduler/token_bucket.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <optional>

namespace gpukit::rt::sched {

/// A lane: the launch state of one task (or of launches without one). Its
/// stream and event ring are fixed when it is made; the task it serves, its
/// counters and its bucket are set by configure() before the lane is
/// published to launchers, and change only when it is recycled.
struct DispatchLane {
  DispatchLane(DispatchBackend& backend, QosClass qos, uint8_t kind, CUstream stream, size_t slots, uint64_t stride,
               bool timed)
      : Backend(backend), qos(qos), kind(kind), stream(stream), timed(timed), stride_mask(stride - 1),
        ring(backend, slots, timed) {
    join = backend.create_event(false);
  }
  ~DispatchLane() { Backend.destroy_event(join); }

  DispatchBackend& Backend;
  const QosClass qos;
  const uint8_t kind; ///< DispatchController::LaneKind
  const CUstream stream;
  const bool timed;
  /// Lanes with a stride record an in-flight marker after every
  /// stride_mask + 1 launches; with stride 1 (mask 0) every launch claims a
  /// ring slot before it is made, which makes the bound exact.
  const uint64_t stride_mask;
  EventRing ring;
  CUevent join = nullptr; ///< TaskScope's ordering with the default stream

  Task* task = nullptr;
  TaskCounters* counters = nullptr;
  LatencyHistogram* kernel_times = nullptr;
  /// Anything beyond the hot path: timing, pacing, or a class with a policy.
  bool slow = false;

  std::mutex pacing_mutex; ///< guards bucket; never held across a driver call
  std::optional<TokenBucket> bucket;
  PacingSpec::Unit unit = PacingSpec::Unit::GpuTime;
  /// Running estimate of one launch's GPU time, charged up front so a burst
  /// of launches cannot overspend before their measurements come back.
  std::atomic<int64_t> estimate_ns{0};

  alignas(64) std::atomic<uint64_t> launched{0};
};

struct DispatchController::Work {
  enum class Kind : uint8_t { Kernel, Graph, Host };
  Kind kind = Kind::Kernel;
  CUfunction function = nullptr;
  Dim3 grid, block;
  unsigned shared_bytes = 0;
  void** args = nullptr;
  CUgraphExec graph = nullptr;
  uint64_t kernels = 1;
  llvm::function_ref<void()> host;
};

namespace {

/// Untimed lanes mark every 64th launch: an event record costs about what a
/// launch does, so the ring adds ~1/64 of a launch to the hot path, and the
/// bound (a multiple of 64) stays far below the driver's own queue.
constexpr uint64_t kMarkerStride = 64;

thread_local GraphRecorder* tRecorder = nullptr;

/// Publishes a claimed ring slot when it goes out of scope, so a launch
/// that throws cannot wedge the ring.
struct PublishOnExit {
  EventRing& ring;
  uint64_t pos;
  ~PublishOnExit() { ring.publish(pos); }
};

[[noreturn]] void throw_not_running(const Task& task) {
  TaskState s = task.state();
  throw Error(ErrorKind::Usage,
              fmt::format("cannot launch for task {}: it is {}, and tasks launch only while Running ({}){}",
                          task.label(), to_string(s), task.scheduler().explain(task.id()),
                          s == TaskState::Admitted ? "; call Scheduler::start() first" : ""));
}

} // namespace

GraphRecorder* DispatchController::exchange_recorder(GraphRecorder* recorder) {
  return std::exchange(tRecorder, recorder);
}

DispatchController::DispatchController(DispatchBackend& backend, Clock& clock, Scheduler* scheduler,
                                       DispatchOptions options)
    : Backend(backend), Clk(clock), Sched(scheduler), Opts(options) {
  StreamPriorities p = Backend.stream_priorities();
  // CUDA's default priority is the least urgent one, so "normal" sits midway.
  ClassPriority[size_t(QosClass::Guaranteed)] = p.greatest;
  ClassPriority[size_t(QosClass::Burstable)] = p.least + (p.greatest - p.least) / 2;
  ClassPriority[size_t(QosClass::BestEffort)] = p.least;
  unsigned per_class = std::max(1u, Opts.streams_per_class);
  try {
    for (size_t c = 0; c < kQosClassCount; ++c)
      for (unsigned i = 0; i < per_class; ++i)
        ClassStreams[c].push_back(Backend.create_stream(ClassPriority[c]));
    Default = make_lane(QosClass::Burstable, Opts.time_default_lane ? LaneKind::Timed : LaneKind::Plain,
                        Opts.default_stream);
  } catch (...) {
    for (auto& streams : ClassStreams)
      for (CUstream s : streams)
        Backend.destroy_stream(s);
    throw;
  }
  configure(*Default, nullptr);
  if (Sched)
    Sched->add_observer(this);
}

DispatchController::~DispatchController() {
  if (Sched)
    Sched->remove_observer(this);
  // Wait for everything in flight so no event dies with work pending on it.
  // Errors here are sticky device errors that the next call reports anyway.
  auto quietly_drain = [&](Lane& lane) {
    try {
      drain(lane);
    } catch (...) {
    }
  };
  for (std::unique_ptr<Lane>& lane : Lanes) {
    quietly_drain(*lane);
    if (lane->task) {
      Lane* expected = lane.get();
      lane->task->Lane.compare_exchange_strong(expected, nullptr);
    }
  }
  quietly_drain(*Default);
  Lanes.clear();
  Default.reset();
  for (auto& streams : ClassStreams)
    for (CUstream s : streams)
      Backend.destroy_stream(s);
}

DispatchController::LaneKind DispatchController::kind_of(const Task& task) {
  if (task.spec().pacing && task.spec().pacing->unit == PacingSpec::Unit::GpuTime)
    return LaneKind::Paced;
  return task.kernel_times() ? LaneKind::Timed : LaneKind::Plain;
}

std::unique_ptr<DispatchLane> DispatchController::make_lane(QosClass qos, LaneKind kind, CUstream stream) {
  bool timed = kind != LaneKind::Plain;
  size_t slots = 0;
  uint64_t stride = 1;
  switch (kind) {
  case LaneKind::Paced: slots = Opts.paced_in_flight; break;
  case LaneKind::Timed: slots = Opts.timing_slots; break;
  case LaneKind::Plain:
    if (qos != QosClass::BestEffort) {
      stride = kMarkerStride;
      slots = (Opts.max_in_flight + kMarkerStride - 1) / kMarkerStride;
    }
    break;
  }
  if (qos == QosClass::BestEffort)
    slots = slots ? std::min<size_t>(slots, Opts.best_effort_in_flight) : Opts.best_effort_in_flight;
  else
    slots = std::min<size_t>(slots, Opts.max_in_flight);
  return std::make_unique<Lane>(Backend, qos, static_cast<uint8_t>(kind), stream, std::max<size_t>(slots, 1),
                                stride, timed);
}

void DispatchController::configure(Lane& lane, Task* task) {
  lane.task = task;
  lane.counters = task ? &task->Counters : &DefaultCounters;
  lane.kernel_times = task ? task->kernel_times() : (lane.timed ? &DefaultKernelTimes : nullptr);
  {
    std::lock_guard lock(lane.pacing_mutex);
    lane.bucket.reset();
    if (task && task->spec().pacing) {
      const PacingSpec& p = *task->spec().pacing;
      lane.bucket.emplace(p.amount, p.window, p.capacity(), Clk.now());
      lane.unit = p.unit;
    }
  }
  lane.estimate_ns.store(0, std::memory_order_relaxed);
  // Guaranteed lanes need nothing extra at launch: BestEffort launches ask
  // the Guaranteed streams themselves whether work is in flight.
  lane.slow = lane.timed || lane.bucket.has_value() || (task && lane.qos == QosClass::BestEffort);
}

DispatchLane* DispatchController::take_lane(QosClass qos, LaneKind kind) {
  std::lock_guard lock(LanesMutex);
  std::vector<Lane*>& free = FreeLanes[size_t(qos)][size_t(kind)];
  if (free.empty())
    return nullptr;
  Lane* lane = free.back();
  free.pop_back();
  return lane;
}

DispatchLane& DispatchController::lane_for(Task* task) {
  if (!task)
    return *Default;
  Lane* lane = task->Lane.load(std::memory_order_acquire);
  return lane ? *lane : bind(*task);
}

DispatchLane& DispatchController::bind(Task& task) {
  if (!Sched || &task.scheduler() != Sched)
    throw Error(ErrorKind::Usage,
                fmt::format("task {} belongs to a Scheduler this DispatchController was not made with; pass that "
                            "scheduler to the controller's constructor",
                            task.label()));
  if (task.state() != TaskState::Running)
    throw_not_running(task);
  QosClass qos = task.qos();
  LaneKind kind = kind_of(task);
  Lane* lane = take_lane(qos, kind);
  if (!lane) {
    std::vector<CUstream>& streams = ClassStreams[size_t(qos)];
    CUstream stream = streams[NextStream[size_t(qos)].fetch_add(1) % streams.size()];
    std::unique_ptr<Lane> made = make_lane(qos, kind, stream); // driver calls: outside the lock
    lane = made.get();
    std::lock_guard lock(LanesMutex);
    Lanes.push_back(std::move(made));
  }
  configure(*lane, &task);
  if (qos == QosClass::Guaranteed)
    GuaranteedCount.fetch_add(1, std::memory_order_release);
  Lane* expected = nullptr;
  if (!task.Lane.compare_exchange_strong(expected, lane, std::memory_order_acq_rel)) {
    release(*lane); // another thread bound one first
    return *expected;
  }
  // The task may have finished between the state check and the exchange;
  // then the observer found no lane to recycle, so do it here.
  if (is_terminal(task.state())) {
    Lane* mine = lane;
    if (task.Lane.compare_exchange_strong(mine, nullptr, std::memory_order_acq_rel))
      release(*lane);
    throw_not_running(task);
  }
  return *lane;
}

void DispatchController::release(Lane& lane) {
  if (lane.qos == QosClass::Guaranteed)
    GuaranteedCount.fetch_sub(1, std::memory_order_release);
  // The counters stay pointed at the finished task: a launch racing with
  // the task's end is then still counted for it.
  std::lock_guard lock(LanesMutex);
  FreeLanes[size_t(lane.qos)][lane.kind].push_back(&lane);
}

void DispatchController::on_transition(Task& task, TaskState from, TaskState to) {
  if (!is_terminal(to))
    return;
  Lane* lane = task.Lane.exchange(nullptr, std::memory_order_acq_rel);
  if (!lane)
    return;
  struct ReleaseOnExit {
    DispatchController& self;
    Lane& lane;
    ~ReleaseOnExit() { self.release(lane); }
  } recycle{*this, *lane};
  drain(*lane);
}

void DispatchController::launch(Task* task, CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes,
                                void** args) {
  if (GraphRecorder* recorder = tRecorder; recorder && &recorder->controller() == this) [[unlikely]] {
    recorder->launch(function, grid, block, shared_bytes, args);
    return;
  }
  Lane& lane = lane_for(task);
  if (!lane.slow) [[likely]] {
    uint64_t n = lane.launched.fetch_add(1, std::memory_order_relaxed);
    Backend.launch(function, grid, block, shared_bytes, lane.stream, args);
    lane.counters->launches.fetch_add(1, std::memory_order_relaxed);
    if ((n & lane.stride_mask) == lane.stride_mask) [[unlikely]]
      mark_in_flight(lane);
    return;
  }
  Work work;
  work.kind = Work::Kind::Kernel;
  work.function = function;
  work.grid = grid;
  work.block = block;
  work.shared_bytes = shared_bytes;
  work.args = args;
  dispatch(lane, work);
}

void DispatchController::launch_graph(Task* task, const LaunchGraph& graph) {
  if (tRecorder)
    throw Error(ErrorKind::Usage, "cannot replay a graph on a thread that is capturing one; finish() the "
                                  "GraphRecorder first");
  if (!graph || &graph.controller() != this)
    throw Error(ErrorKind::Usage, "LaunchGraph::launch on an empty graph or one captured by another controller");
  Work work;
  work.kind = Work::Kind::Graph;
  work.graph = graph.handle();
  work.kernels = graph.kernels();
  dispatch(lane_for(task), work);
}

void DispatchController::launch_host(Task* task, llvm::function_ref<void()> host) {
  if (tRecorder)
    throw Error(ErrorKind::Usage, "host work cannot be captured into a graph");
  Work work;
  work.kind = Work::Kind::Host;
  work.kernels = 0;
  work.host = host;
  dispatch(lane_for(task), work);
}

void DispatchController::dispatch(Lane& lane, const Work& work) {
  uint64_t kernels = std::max<uint64_t>(work.kernels, 1);
  if (lane.stride_mask == 0) {
    // Claim first: waiting for room in flight also collects the
    // measurements that pacing then decides on.
    auto on_retired = [&](EventRing::Slot& s) { retired(lane, s); };
    uint64_t pos = lane.ring.claim(on_retired);
    EventRing::Slot& slot = lane.ring.slot(pos);
    slot.valid = false;
    PublishOnExit publish{lane.ring, pos};
    if (lane.qos == QosClass::BestEffort && lane.task)
      yield_to_guaranteed(lane);
    slot.charged = lane.bucket ? pace(lane, kernels) : Nanos(0);
    if (lane.timed)
      Backend.record(slot.start, lane.stream);
    run(work, lane.stream);
    Backend.record(slot.end, lane.stream);
    slot.valid = true;
  } else {
    if (lane.bucket)
      pace(lane, kernels);
    uint64_t n = lane.launched.fetch_add(1, std::memory_order_relaxed);
    run(work, lane.stream);
    if ((n & lane.stride_mask) == lane.stride_mask)
      mark_in_flight(lane);
  }
  TaskCounters& c = *lane.counters;
  switch (work.kind) {
  case Work::Kind::Kernel: c.launches.fetch_add(1, std::memory_order_relaxed); break;
  case Work::Kind::Graph:
    c.launches.fetch_add(work.kernels, std::memory_order_relaxed);
    c.graph_launches.fetch_add(1, std::memory_order_relaxed);
    break;
  case Work::Kind::Host: c.host_launches.fetch_add(1, std::memory_order_relaxed); break;
  }
}

void DispatchController::run(const Work& work, CUstream stream) {
  switch (work.kind) {
  case Work::Kind::Kernel:
    Backend.launch(work.function, work.grid, work.block, work.shared_bytes, stream, work.args);
    return;
  case Work::Kind::Graph: Backend.launch_graph(work.graph, stream); return;
  case Work::Kind::Host: Backend.launch_host(stream, work.host); return;
  }
  llvm_unreachable("Work::Kind out of range");
}

void DispatchController::mark_in_flight(Lane& lane) {
  auto on_retired = [&](EventRing::Slot& s) { retired(lane, s); };
  uint64_t pos = lane.ring.claim(on_retired);
  EventRing::Slot& slot = lane.ring.slot(pos);
  slot.valid = false;
  PublishOnExit publish{lane.ring, pos};
  Backend.record(slot.end, lane.stream);
  slot.valid = true;
}

void DispatchController::drain(Lane& lane) {
  if (lane.stride_mask != 0)
    mark_in_flight(lane); // covers the launches since the last marker
  auto on_retired = [&](EventRing::Slot& s) { retired(lane, s); };
  lane.ring.retire(true, on_retired);
}

void DispatchController::retired(Lane& lane, EventRing::Slot& slot) {
  if (!lane.timed || !slot.valid)
    return;
  Nanos t = Backend.elapsed(slot.start, slot.end);
  lane.counters->gpu_ns.fetch_add(t.count(), std::memory_order_relaxed);
  lane.counters->timed_kernels.fetch_add(1, std::memory_order_relaxed);
  if (lane.kernel_times)
    lane.kernel_times->add(t);
  // An exponential average with weight 1/8 follows a changing kernel mix
  // within a few launches without jumping at one outlier.
  int64_t estimate = lane.estimate_ns.load(std::memory_order_relaxed);
  lane.estimate_ns.store(estimate == 0 ? t.count() : estimate + (t.count() - estimate) / 8,
                         std::memory_order_relaxed);
  if (lane.bucket && lane.unit == PacingSpec::Unit::GpuTime) {
    std::lock_guard lock(lane.pacing_mutex);
    lane.bucket->charge((t - slot.charged).count(), Clk.now());
  }
}

Nanos DispatchController::pace(Lane& lane, uint64_t launches) {
  auto on_retired = [&](EventRing::Slot& s) { retired(lane, s); };
  std::optional<TimePoint> held_since;
  for (;;) {
    lane.ring.retire(false, on_retired); // measured time comes back here
    bool go = false;
    Nanos charged{0};
    Nanos wait{0};
    {
      std::lock_guard lock(lane.pacing_mutex);
      TokenBucket& bucket = *lane.bucket;
      TimePoint now = Clk.now();
      switch (lane.unit) {
      case PacingSpec::Unit::Launches: {
        int64_t cost = static_cast<int64_t>(std::min<uint64_t>(launches, bucket.burst()));
        go = bucket.try_take(cost, now);
        if (!go)
          wait = bucket.time_until(cost, now);
        break;
      }
      case PacingSpec::Unit::GpuTime:
        bucket.refill(now);
        go = bucket.tokens() > 0;
        if (go) {
          charged = Nanos(lane.estimate_ns.load(std::memory_order_relaxed) * static_cast<int64_t>(launches));
          bucket.charge(charged.count(), now);
        } else {
          wait = bucket.time_until(1, now);
        }
        break;
      }
    }
    if (go) {
      if (held_since)
        end_hold(lane, *held_since);
      return charged;
    }
    if (!held_since) {
      held_since = Clk.now();
      lane.counters->holding.store(HoldReason::Pacing, std::memory_order_relaxed);
    }
    // Launches still in flight will be measured and may lengthen the wait,
    // so look again at least every poll interval while there are any.
    Clk.sleep_for(lane.ring.in_flight() ? std::min(wait, Opts.best_effort_poll) : wait);
  }
}

void DispatchController::yield_to_guaranteed(Lane& lane) {
  if (GuaranteedCount.load(std::memory_order_acquire) == 0 || Opts.best_effort_max_hold.count() <= 0)
    return;
  std::optional<TimePoint> held_since;
  while (guaranteed_busy()) {
    TimePoint now = Clk.now();
    if (!held_since) {
      held_since = now;
      lane.counters->holding.store(HoldReason::GuaranteedWork, std::memory_order_relaxed);
    }
    if (now - *held_since >= Opts.best_effort_max_hold)
      break;
    Clk.sleep_for(Opts.best_effort_poll);
  }
  if (held_since)
    end_hold(lane, *held_since);
}

bool DispatchController::guaranteed_busy() {
  // Only Guaranteed lanes use the Guaranteed streams, so a stream with work
  // pending means Guaranteed work in flight; asking the streams costs the
  // Guaranteed launch path nothing.
  for (CUstream stream : ClassStreams[size_t(QosClass::Guaranteed)])
    if (!Backend.query_stream(stream))
      return true;
  return false;
}

void DispatchController::end_hold(Lane& lane, TimePoint since) {
  lane.counters->holds.fetch_add(1, std::memory_order_relaxed);
  lane.counters->held_ns.fetch_add((Clk.now() - since).count(), std::memory_order_relaxed);
  lane.counters->holding.store(HoldReason::None, std::memory_order_relaxed);
}

CUstream DispatchController::stream_for(Task* task) { return lane_for(task).stream; }

void DispatchController::note_transfer(Task* task, uint64_t bytes) {
  TaskCounters& c = task ? task->counters() : DefaultCounters;
  c.bytes_transferred.fetch_add(bytes, std::memory_order_relaxed);
}

void DispatchController::synchronize(Task* task) {
  Lane* lane = task ? task->Lane.load(std::memory_order_acquire) : Default.get();
  if (!lane)
    return; // never launched, or finished (and drained then)
  Backend.synchronize(lane->stream);
  auto on_retired = [&](EventRing::Slot& s) { retired(*lane, s); };
  lane->ring.retire(true, on_retired);
}

void DispatchController::poll() {
  std::vector<Lane*> lanes{Default.get()};
  {
    std::lock_guard lock(LanesMutex);
    for (std::unique_ptr<Lane>& lane : Lanes)
      lanes.push_back(lane.get());
  }
  for (Lane* lane : lanes) {
    auto on_retired = [&](EventRing::Slot& s) { retired(*lane, s); };
    lane->ring.retire(false, on_retired);
  }
}

TaskScope::TaskScope(DispatchController& dispatch, Task& task) : Dispatch(dispatch), Bound(task) {
  DispatchLane& lane = dispatch.lane_for(&task);
  DispatchLane& def = *dispatch.Default;
  if (lane.stream != def.stream) {
    dispatch.Backend.record(def.join, def.stream);
    dispatch.Backend.stream_wait(lane.stream, def.join);
  }
  Previous = set_current_task(&task);
}

TaskScope::~TaskScope() {
  set_current_task(Previous);
  DispatchLane* lane = Bound.Lane.load(std::memory_order_acquire);
  DispatchLane& def = *Dispatch.Default;
  if (!lane || lane->stream == def.stream)
    return; // finished inside the scope: its work was drained then
  try {
    Dispatch.Backend.record(lane->join, lane->stream);
    Dispatch.Backend.stream_wait(def.stream, lane->join);
  } catch (...) {
    // A destructor must not throw; CUDA errors are sticky, so the next call
    // on either stream reports this one.
  }
}

} // namespace gpukit::rt::sched
