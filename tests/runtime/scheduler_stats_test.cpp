// Statistics per task and per class, the event log and the printed tables.

#include "runtime/scheduler/scheduler.hpp"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

namespace gpukit::rt::sched {
namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;
using std::chrono::milliseconds;

TEST(SchedulerStats, WaitAndRunTimesPerClass) {
  ManualClock clock;
  Scheduler s({.memory_capacity = 4 * GiB, .clock = &clock});
  // Guaranteed tasks that each need all the memory: they run one after the
  // other for 5 ms each, so they wait 0, 5, 10 ... 45 ms.
  TaskId hog = s.submit({.name = "hog", .memory_request = 4 * GiB});
  std::vector<TaskId> g;
  for (int i = 0; i < 10; ++i)
    g.push_back(s.submit({.name = "g", .qos = QosClass::Guaranteed, .memory_request = 4 * GiB}));
  s.start(hog);
  s.complete(hog);
  for (TaskId id : g) {
    ASSERT_EQ(s.state(id), TaskState::Admitted);
    s.start(id);
    clock.advance(milliseconds(5));
    s.complete(id);
  }
  ClassStats cs = s.class_stats(QosClass::Guaranteed);
  EXPECT_EQ(cs.tasks, 10u);
  EXPECT_EQ(cs.by_state[size_t(TaskState::Completed)], 10u);
  EXPECT_EQ(cs.wait.count, 10u);
  EXPECT_EQ(cs.wait.p50, milliseconds(20));
  EXPECT_EQ(cs.wait.p99, milliseconds(45));
  EXPECT_EQ(cs.run.p50, milliseconds(5));
  EXPECT_EQ(cs.run.p99, milliseconds(5));
  ClassStats b = s.class_stats(QosClass::Burstable);
  EXPECT_EQ(b.tasks, 1u);
  EXPECT_EQ(b.run.count, 1u);
  EXPECT_EQ(b.run.p50, Nanos(0));

  TaskStats st = s.stats(g[3]);
  EXPECT_EQ(st.wait, milliseconds(15));
  EXPECT_EQ(st.run, milliseconds(5));
  EXPECT_TRUE(st.admitted);
  EXPECT_TRUE(st.started);
}

TEST(SchedulerStats, UnfinishedTimesRunToNow) {
  ManualClock clock;
  Scheduler s({.memory_capacity = GiB, .clock = &clock});
  TaskId hog = s.submit({.name = "hog", .memory_request = GiB});
  TaskId waiting = s.submit({.name = "waiting", .memory_request = GiB});
  s.start(hog);
  clock.advance(milliseconds(7));
  EXPECT_EQ(s.stats(hog).run, milliseconds(7));
  EXPECT_EQ(s.stats(waiting).wait, milliseconds(7));
  EXPECT_FALSE(s.stats(waiting).admitted);
  s.cancel(waiting);
  clock.advance(milliseconds(7));
  EXPECT_EQ(s.stats(waiting).wait, milliseconds(7)) << "stops at the end";
  ClassStats cs = s.class_stats(QosClass::Burstable);
  EXPECT_EQ(cs.wait.count, 1u) << "a task never admitted has no wait sample";
}

TEST(SchedulerStats, PrintedTables) {
  ManualClock clock;
  Scheduler s({.memory_capacity = GiB, .clock = &clock});
  TaskId a = s.submit({.name = "infer", .qos = QosClass::Guaranteed, .memory_request = GiB / 2});
  s.start(a);
  s.task(a).counters().launches += 42;
  s.task(a).counters().bytes_transferred += 3 << 20;
  clock.advance(milliseconds(2));
  s.complete(a);
  std::string out;
  llvm::raw_string_ostream os(out);
  s.print_stats(os);
  os.flush();
  EXPECT_NE(out.find("class       tasks waiting running  done   wait p50"), std::string::npos) << out;
  EXPECT_NE(out.find("Guaranteed      1       0       0     1       0 ns       0 ns    2.00 ms    2.00 ms        42"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    1 infer                Guaranteed  Completed        0 ns    2.00 ms        42    3.0 MiB"),
            std::string::npos)
      << out;

  std::string events;
  llvm::raw_string_ostream es(events);
  s.print_events(es);
  es.flush();
  EXPECT_NE(events.find("'infer' (#1)          Running -> Completed"), std::string::npos) << events;
}

TEST(SchedulerStats, EventLogIsBounded) {
  Scheduler s({.memory_capacity = GiB, .event_log_capacity = 5});
  for (int i = 0; i < 10; ++i)
    s.cancel(s.submit({}));
  std::vector<SchedulerEvent> events = s.events();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events.back().to, TaskState::Cancelled);
  EXPECT_EQ(events.back().task, TaskId{10});
}

} // namespace
} // namespace gpukit::rt::sched
