// Graph capture and replay on the simulation backend: captured launches do
// not run, argument values are copied at capture, a replay runs the whole
// sequence in order under the task's policy, and misuse is refused.

#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/graph.hpp"
#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/sim_backend.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace gpukit::rt::sched {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

class DispatchGraph : public ::testing::Test {
protected:
  ManualClock Clock;
  SimBackend Sim{Clock};
  Scheduler S{{.memory_capacity = uint64_t(1) << 30, .clock = &Clock}};
  DispatchController Dispatch{Sim, Clock, &S, {.default_stream = Sim.default_stream()}};

  /// acc = acc * 3 + value: order-sensitive, so a reordered replay shows.
  std::vector<int64_t> Acc = std::vector<int64_t>(4, 0);
  CUfunction Step = Sim.add_kernel(
      "step",
      [this](void** args) {
        int slot = *static_cast<int*>(args[0]);
        int64_t value = *static_cast<int64_t*>(args[1]);
        Acc[slot] = Acc[slot] * 3 + value;
      },
      microseconds(5), {sizeof(int), sizeof(int64_t)});

  void step(Task* task, int slot, int64_t value) {
    void* args[] = {&slot, &value};
    Dispatch.launch(task, Step, {1}, {32}, 0, args);
  }
};

TEST_F(DispatchGraph, CaptureRecordsWithoutRunningThenReplaysInOrder) {
  GraphRecorder recorder(Dispatch);
  for (int64_t i = 1; i <= 20; ++i)
    step(nullptr, 0, i);
  EXPECT_EQ(Acc[0], 0) << "captured launches do not run";
  EXPECT_EQ(Sim.launch_count(), 0u);
  EXPECT_EQ(recorder.kernels(), 20u);
  LaunchGraph graph = recorder.finish();
  EXPECT_EQ(graph.kernels(), 20u);

  // After finish() launches run again.
  step(nullptr, 1, 7);
  EXPECT_EQ(Acc[1], 7);

  graph.launch();
  int64_t once = 0;
  for (int64_t i = 1; i <= 20; ++i)
    once = once * 3 + i;
  EXPECT_EQ(Acc[0], once);
  graph.launch();
  int64_t twice = once;
  for (int64_t i = 1; i <= 20; ++i)
    twice = twice * 3 + i;
  EXPECT_EQ(Acc[0], twice);
  EXPECT_EQ(Dispatch.default_counters().launches.load(), 1u + 40u);
  EXPECT_EQ(Dispatch.default_counters().graph_launches.load(), 2u);
  size_t from_graph = 0;
  for (const SimBackend::LaunchRecord& r : Sim.history())
    from_graph += r.from_graph;
  EXPECT_EQ(from_graph, 40u);
}

TEST_F(DispatchGraph, ArgumentValuesAreCopiedAtCapture) {
  GraphRecorder recorder(Dispatch);
  int slot = 2;
  int64_t value = 5;
  void* args[] = {&slot, &value};
  Dispatch.launch(nullptr, Step, {1}, {32}, 0, args);
  LaunchGraph graph = recorder.finish();
  value = 1000; // changing the variable afterwards does not change the graph
  graph.launch();
  EXPECT_EQ(Acc[2], 5);
}

TEST_F(DispatchGraph, ReplayRunsOnTheTasksStreamUnderItsPacing) {
  TaskId id = S.submit({.name = "replayer", .qos = QosClass::Guaranteed,
                        .pacing = PacingSpec::launches_per(40, std::chrono::seconds(1))});
  S.start(id);
  Task& t = S.task(id);
  GraphRecorder recorder(Dispatch);
  for (int64_t i = 1; i <= 20; ++i)
    step(&t, 3, i); // recorded whatever task the launch names
  LaunchGraph graph = recorder.finish();
  EXPECT_EQ(t.counters().launches.load(), 0u) << "capturing is not launching";
  for (int r = 0; r < 3; ++r)
    graph.launch(&t);
  // A replay costs 20 launches of the 40-per-second budget: two go at once,
  // the third waits half a second.
  std::vector<Nanos> starts;
  for (const SimBackend::LaunchRecord& r : Sim.history())
    if (r.from_graph && starts.size() < 41)
      starts.push_back(r.issued.time_since_epoch());
  ASSERT_EQ(starts.size(), 41u);
  EXPECT_EQ(starts[39], Nanos(0));
  EXPECT_EQ(starts[40], milliseconds(500));
  EXPECT_EQ(Sim.history().back().priority, Dispatch.priority_of(QosClass::Guaranteed));
  EXPECT_EQ(t.counters().launches.load(), 60u);
  EXPECT_EQ(t.counters().graph_launches.load(), 3u);
  S.complete(id);
}

TEST_F(DispatchGraph, OtherThreadsAreNotCaptured) {
  GraphRecorder recorder(Dispatch);
  step(nullptr, 0, 1);
  std::thread other([&] { step(nullptr, 1, 9); });
  other.join();
  EXPECT_EQ(Acc[1], 9) << "another thread's launch ran at once";
  EXPECT_EQ(recorder.kernels(), 1u);
}

TEST_F(DispatchGraph, Misuse) {
  {
    GraphRecorder recorder(Dispatch);
    EXPECT_THROW(GraphRecorder nested(Dispatch), Error);
    LaunchGraph graph;
    EXPECT_THROW(graph.launch(), Error) << "empty graph";
    EXPECT_THROW(Dispatch.launch_host(nullptr, [] {}), Error) << "host work cannot be captured";
    step(nullptr, 0, 4);
    // Destroyed without finish(): abandoned.
  }
  EXPECT_EQ(Acc[0], 0);
  step(nullptr, 0, 4);
  EXPECT_EQ(Acc[0], 4) << "launches run again once the recorder is gone";

  GraphRecorder first(Dispatch);
  step(nullptr, 0, 1);
  LaunchGraph graph = first.finish();
  EXPECT_THROW(first.finish(), Error);
  GraphRecorder second(Dispatch);
  EXPECT_THROW(graph.launch(), Error) << "no replay while capturing";
  LaunchGraph empty = second.finish();
  EXPECT_EQ(empty.kernels(), 0u);
  empty.launch();
  LaunchGraph moved = std::move(graph);
  EXPECT_FALSE(graph);
  moved.launch();
  EXPECT_EQ(Acc[0], 4 * 3 + 1);
}

} // namespace
} // namespace gpukit::rt::sched
