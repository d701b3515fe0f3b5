// The DispatchController's policy on the simulation backend with a
// ManualClock: streams per class, the in-flight bound, pacing by GPU time
// and by launch count, BestEffort yielding to Guaranteed work, timing,
// lane recycling, TaskScope ordering and host work. Every time below is
// exact: simulated time moves only when the policy waits.

#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/scheduling.hpp"
#include "runtime/scheduler/sim_backend.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace gpukit::rt::sched {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
constexpr uint64_t GiB = uint64_t(1) << 30;

class DispatchSim : public ::testing::Test {
protected:
  ManualClock Clock;
  SimBackend Sim{Clock};
  Scheduler S{{.memory_capacity = 16 * GiB, .clock = &Clock}};

  std::unique_ptr<DispatchController> make(DispatchOptions options = {}) {
    options.default_stream = Sim.default_stream();
    return std::make_unique<DispatchController>(Sim, Clock, &S, options);
  }
  CUfunction kernel(std::string name, Nanos duration) {
    return Sim.add_kernel(std::move(name), [](void**) {}, duration);
  }
  Task& running(TaskSpec spec) {
    TaskId id = S.submit(std::move(spec));
    EXPECT_EQ(S.state(id), TaskState::Admitted);
    S.start(id);
    return S.task(id);
  }
  /// Issue times of the launches of `name`, since the clock's epoch.
  std::vector<Nanos> issued(std::string_view name) const {
    std::vector<Nanos> out;
    for (const SimBackend::LaunchRecord& r : Sim.history())
      if (r.kernel == name)
        out.push_back(r.issued.time_since_epoch());
    return out;
  }
};

TEST_F(DispatchSim, EachClassGetsItsStreamPriority) {
  auto dispatch = make();
  EXPECT_EQ(dispatch->priority_of(QosClass::Guaranteed), -5);
  EXPECT_EQ(dispatch->priority_of(QosClass::Burstable), -2);
  EXPECT_EQ(dispatch->priority_of(QosClass::BestEffort), 0);
  CUfunction k = kernel("k", Nanos(0));
  Task& g = running({.name = "g", .qos = QosClass::Guaranteed});
  Task& b = running({.name = "b", .qos = QosClass::Burstable});
  Task& be = running({.name = "be", .qos = QosClass::BestEffort});
  dispatch->launch(&g, k, {1}, {32}, 0, nullptr);
  dispatch->launch(&b, k, {1}, {32}, 0, nullptr);
  dispatch->launch(&be, k, {1}, {32}, 0, nullptr);
  dispatch->launch(nullptr, k, {1}, {32}, 0, nullptr);
  std::vector<SimBackend::LaunchRecord> h = Sim.history();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].priority, -5);
  EXPECT_EQ(h[1].priority, -2);
  EXPECT_EQ(h[2].priority, 0);
  EXPECT_EQ(h[3].stream, Sim.default_stream()) << "no task: the runtime's stream";
  EXPECT_EQ(dispatch->stream_for(&g), h[0].stream);
  EXPECT_EQ(g.counters().launches.load(), 1u);
  EXPECT_EQ(dispatch->default_counters().launches.load(), 1u);
}

TEST_F(DispatchSim, LaunchingForATaskThatIsNotRunningIsAnError) {
  auto dispatch = make();
  CUfunction k = kernel("k", Nanos(0));
  TaskId id = S.submit({.name = "early"});
  try {
    dispatch->launch(&S.task(id), k, {1}, {32}, 0, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "cannot launch for task 'early' (#1): it is Admitted, and tasks launch only while Running "
                           "(admitted: 0 B reserved after waiting 0 ns; ready to start); call Scheduler::start() "
                           "first");
  }
  S.start(id);
  dispatch->launch(&S.task(id), k, {1}, {32}, 0, nullptr);
  S.complete(id);
  EXPECT_THROW(dispatch->launch(&S.task(id), k, {1}, {32}, 0, nullptr), Error);
  Scheduler other({.memory_capacity = GiB});
  TaskId foreign = other.submit({.name = "foreign"});
  other.start(foreign);
  EXPECT_THROW(dispatch->launch(&other.task(foreign), k, {1}, {32}, 0, nullptr), Error);
}

TEST_F(DispatchSim, BestEffortInFlightBoundIsExact) {
  auto dispatch = make({.best_effort_in_flight = 4});
  CUfunction k = kernel("bulk", milliseconds(1));
  Task& be = running({.name = "be", .qos = QosClass::BestEffort});
  for (int i = 0; i < 10; ++i)
    dispatch->launch(&be, k, {1}, {32}, 0, nullptr);
  // Four go at once; each later one waits for the oldest to finish.
  std::vector<Nanos> expected = {Nanos(0),         Nanos(0),         Nanos(0),         Nanos(0),
                                 milliseconds(1), milliseconds(2), milliseconds(3), milliseconds(4),
                                 milliseconds(5), milliseconds(6)};
  EXPECT_EQ(issued("bulk"), expected);
}

TEST_F(DispatchSim, DefaultLaneInFlightBound) {
  auto dispatch = make({.max_in_flight = 128});
  CUfunction k = kernel("k", milliseconds(1));
  for (int i = 0; i < 193; ++i)
    dispatch->launch(nullptr, k, {1}, {32}, 0, nullptr);
  std::vector<Nanos> t = issued("k");
  ASSERT_EQ(t.size(), 193u);
  // Markers follow launches 63, 127, 191; two ring slots, so the third
  // marker waits for the first (after 64 kernels of 1 ms): at most 128
  // launches stay queued beyond a marker.
  EXPECT_EQ(t[191], Nanos(0));
  EXPECT_EQ(t[192], milliseconds(64));
  EXPECT_EQ(dispatch->default_counters().launches.load(), 193u);
}

TEST_F(DispatchSim, LaunchRatePacing) {
  auto dispatch = make();
  CUfunction k = kernel("paced", Nanos(0));
  Task& t = running({.name = "t", .pacing = PacingSpec::launches_per(100, std::chrono::seconds(1))});
  for (int i = 0; i < 300; ++i)
    dispatch->launch(&t, k, {1}, {32}, 0, nullptr);
  std::vector<Nanos> at = issued("paced");
  ASSERT_EQ(at.size(), 300u);
  // A burst of 100, then one every 10 ms.
  for (int i = 0; i < 300; ++i)
    ASSERT_EQ(at[i], i < 100 ? Nanos(0) : milliseconds(10) * (i - 99)) << i;
  EXPECT_EQ(t.counters().holds.load(), 200u);
  EXPECT_EQ(Nanos(t.counters().held_ns.load()), milliseconds(2000));
  EXPECT_EQ(S.explain(t.id()), "running for 2.00 s: 300 launches, 0 B transferred, 0 B in use (request 0 B, no "
                               "limit); paced to 100 launches per 1.00 s; held back 200 times for 2.00 s in all");
}

TEST_F(DispatchSim, GpuSharePacing) {
  auto dispatch = make();
  CUfunction k = kernel("share", milliseconds(10));
  Task& t = running({.name = "t", .pacing = PacingSpec::gpu_share(0.25, milliseconds(100))});
  for (int i = 0; i < 10; ++i)
    dispatch->launch(&t, k, {1}, {32}, 0, nullptr);
  dispatch->synchronize(&t);
  std::vector<Nanos> at = issued("share");
  ASSERT_EQ(at.size(), 10u);
  // The 25 ms burst and two launches in flight unmeasured let the first
  // three go by 10 ms; from then on each 10 ms kernel costs 40 ms of
  // wall time at a quarter share.
  EXPECT_EQ(at[0], Nanos(0));
  EXPECT_EQ(at[1], Nanos(0));
  EXPECT_EQ(at[2], milliseconds(10));
  for (int i = 4; i < 10; ++i)
    EXPECT_NEAR(static_cast<double>((at[i] - at[i - 1]).count()), 40e6, 1e3) << i;
  // Over the steady part the share is a quarter.
  double share = 60e6 / static_cast<double>((at[9] - at[3]).count());
  EXPECT_NEAR(share, 0.25, 0.001);
  EXPECT_EQ(t.counters().timed_kernels.load(), 10u);
  EXPECT_EQ(Nanos(t.counters().gpu_ns.load()), milliseconds(100));
  ASSERT_NE(t.kernel_times(), nullptr);
  EXPECT_NEAR(static_cast<double>(t.kernel_times()->percentile(0.5).count()), 10e6, 10e6 / 32);
}

TEST_F(DispatchSim, BestEffortYieldsToGuaranteedWork) {
  auto dispatch = make();
  CUfunction latency = kernel("latency", milliseconds(1));
  CUfunction bulk = kernel("bulk", milliseconds(5));
  Task& g = running({.name = "g", .qos = QosClass::Guaranteed});
  Task& be = running({.name = "be", .qos = QosClass::BestEffort});
  dispatch->launch(&be, bulk, {1}, {32}, 0, nullptr); // nothing Guaranteed in flight: goes at once
  dispatch->launch(&g, latency, {1}, {32}, 0, nullptr);
  dispatch->launch(&be, bulk, {1}, {32}, 0, nullptr); // held until the Guaranteed kernel is done
  EXPECT_EQ(issued("bulk"), (std::vector<Nanos>{Nanos(0), milliseconds(1)}));
  EXPECT_EQ(be.counters().holds.load(), 1u);
  EXPECT_EQ(Nanos(be.counters().held_ns.load()), milliseconds(1));
  EXPECT_EQ(g.counters().holds.load(), 0u);
  EXPECT_NE(S.explain(be.id()).find("held back 1 time for 1.00 ms in all"), std::string::npos) << S.explain(be.id());
}

TEST_F(DispatchSim, BestEffortIsHeldAtMostMaxHold) {
  auto dispatch = make({.best_effort_max_hold = milliseconds(30)});
  CUfunction long_g = kernel("long", milliseconds(100));
  CUfunction bulk = kernel("bulk", milliseconds(1));
  Task& g = running({.name = "g", .qos = QosClass::Guaranteed});
  Task& be = running({.name = "be", .qos = QosClass::BestEffort});
  dispatch->launch(&g, long_g, {1}, {32}, 0, nullptr);
  dispatch->launch(&be, bulk, {1}, {32}, 0, nullptr);
  EXPECT_EQ(issued("bulk"), (std::vector<Nanos>{milliseconds(30)}));
  // Once the Guaranteed task finishes its lane no longer holds anyone back.
  S.complete(g.id());
  TimePoint after = Clock.now();
  dispatch->launch(&be, bulk, {1}, {32}, 0, nullptr);
  EXPECT_EQ(issued("bulk").back(), after.time_since_epoch());
}

TEST_F(DispatchSim, CompleteWaitsForTheTasksWorkAndRecyclesItsLane) {
  auto dispatch = make({.streams_per_class = 2});
  CUfunction k = kernel("k", milliseconds(5));
  Task& a = running({.name = "a", .record_timing = true});
  dispatch->launch(&a, k, {1}, {32}, 0, nullptr);
  dispatch->launch(&a, k, {1}, {32}, 0, nullptr);
  CUstream stream_a = dispatch->stream_for(&a);
  S.complete(a.id());
  EXPECT_EQ(Clock.elapsed(), milliseconds(10)) << "complete() drained the lane";
  EXPECT_EQ(Nanos(a.counters().gpu_ns.load()), milliseconds(10));
  TaskStats st = S.stats(a.id());
  EXPECT_EQ(st.timed_kernels, 2u);
  EXPECT_EQ(st.gpu_time, milliseconds(10));
  EXPECT_EQ(st.launches, 2u);

  Task& b = running({.name = "b", .record_timing = true});
  EXPECT_EQ(dispatch->stream_for(&b), stream_a) << "b got a's recycled lane, not a new stream";
  Task& c = running({.name = "c", .record_timing = true});
  EXPECT_NE(dispatch->stream_for(&c), stream_a) << "a second live lane takes the next stream";
}

TEST_F(DispatchSim, TaskScopeOrdersAgainstTheDefaultStream) {
  auto dispatch = make();
  CUfunction k3 = kernel("before", milliseconds(3));
  CUfunction k2 = kernel("inside", milliseconds(2));
  CUfunction k1 = kernel("after", milliseconds(1));
  Task& t = running({.name = "t"});
  dispatch->launch(nullptr, k3, {1}, {32}, 0, nullptr);
  EXPECT_EQ(current_task(), nullptr);
  {
    TaskScope scope(*dispatch, t);
    EXPECT_EQ(current_task(), &t);
    dispatch->launch(current_task(), k2, {1}, {32}, 0, nullptr);
  }
  EXPECT_EQ(current_task(), nullptr);
  dispatch->launch(nullptr, k1, {1}, {32}, 0, nullptr);
  std::vector<SimBackend::LaunchRecord> h = Sim.history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_NE(h[1].stream, h[0].stream);
  EXPECT_EQ(h[1].start.time_since_epoch(), milliseconds(3)) << "the task's stream waited for the default one";
  EXPECT_EQ(h[2].start.time_since_epoch(), milliseconds(5)) << "and the default stream for the task's";
}

TEST_F(DispatchSim, HostWorkRunsAfterTheStreamAndIsCounted) {
  auto dispatch = make();
  CUfunction k = kernel("k", milliseconds(4));
  Task& t = running({.name = "t"});
  dispatch->launch(&t, k, {1}, {32}, 0, nullptr);
  Nanos ran_at{-1};
  dispatch->launch_host(&t, [&] { ran_at = Clock.elapsed(); });
  EXPECT_EQ(ran_at, milliseconds(4));
  EXPECT_EQ(t.counters().host_launches.load(), 1u);
  dispatch->note_transfer(&t, 4096);
  EXPECT_EQ(S.stats(t.id()).bytes_transferred, 4096u);
}

TEST_F(DispatchSim, ManyThreadsLaunchForManyTasks) {
  auto dispatch = make({.max_in_flight = 64, .best_effort_in_flight = 2});
  CUfunction k = kernel("k", Nanos(0));
  constexpr int kThreads = 6;
  constexpr int kTasksPerThread = 20;
  constexpr int kLaunches = 50;
  std::vector<std::thread> threads;
  std::atomic<uint64_t> launched{0};
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int i = 0; i < kTasksPerThread; ++i) {
        TaskSpec spec;
        spec.qos = static_cast<QosClass>((th + i) % 3);
        spec.record_timing = i % 2 == 0;
        TaskId id = S.submit(spec);
        S.start(id);
        for (int j = 0; j < kLaunches; ++j)
          dispatch->launch(&S.task(id), k, {1}, {32}, 0, nullptr);
        dispatch->launch(nullptr, k, {1}, {32}, 0, nullptr);
        launched += kLaunches + 1;
        S.complete(id);
        EXPECT_EQ(S.task(id).counters().launches.load(), uint64_t(kLaunches));
      }
    });
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(Sim.launch_count(), launched.load());
  EXPECT_EQ(dispatch->default_counters().launches.load(), uint64_t(kThreads * kTasksPerThread));
  EXPECT_EQ(S.reserved(), 0u);
}

TEST(Scheduling, CpuFallbackStackRunsHostWorkThroughTasks) {
  ManualClock clock;
  std::unique_ptr<Scheduling> s = Scheduling::on_cpu(GiB, &clock);
  ASSERT_NE(s->simulation(), nullptr);
  TaskId id = s->scheduler().submit({.name = "cpu", .qos = QosClass::Guaranteed, .memory_request = GiB / 2});
  s->scheduler().start(id);
  Task& t = s->scheduler().task(id);
  int ran = 0;
  {
    TaskScope scope(s->dispatch(), t);
    s->dispatch().launch_host(current_task(), [&] { ++ran; });
  }
  s->dispatch().launch_host(nullptr, [&] { ++ran; });
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(t.counters().host_launches.load(), 1u);
  EXPECT_EQ(s->dispatch().default_counters().host_launches.load(), 1u);
  s->scheduler().complete(id);
  EXPECT_EQ(s->scheduler().reserved(), 0u);
}

} // namespace
} // namespace gpukit::rt::sched
