// Dependencies between tasks (a DAG: admission waits for every prerequisite
// to complete; failure propagates; a cycle is an error that names it) and
// memory limits at run time.

#include "runtime/scheduler/scheduler.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

namespace gpukit::rt::sched {
namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;
constexpr uint64_t MiB = uint64_t(1) << 20;

class Dependencies : public ::testing::Test {
protected:
  ManualClock Clock;
  Scheduler S{{.memory_capacity = 16 * GiB, .clock = &Clock}};

  void run_to_completion(TaskId id) {
    S.start(id);
    S.complete(id);
  }
};

TEST_F(Dependencies, DiamondRunsInDependencyOrder) {
  //   load -> {left, right} -> join
  TaskId load = S.submit({.name = "load"});
  TaskId left = S.submit({.name = "left", .depends_on = {load}});
  TaskId right = S.submit({.name = "right", .depends_on = {load}});
  TaskId join = S.submit({.name = "join", .depends_on = {left, right, left}}); // duplicates are harmless
  EXPECT_EQ(S.state(load), TaskState::Admitted);
  EXPECT_EQ(S.state(left), TaskState::Pending);
  EXPECT_EQ(S.explain(join), "waiting for 2 unfinished tasks: 'left' (#2) (Pending), 'right' (#3) (Pending)");

  run_to_completion(load);
  EXPECT_EQ(S.state(left), TaskState::Admitted);
  EXPECT_EQ(S.state(right), TaskState::Admitted);
  EXPECT_EQ(S.state(join), TaskState::Pending);
  run_to_completion(left);
  EXPECT_EQ(S.explain(join), "waiting for 1 unfinished task: 'right' (#3) (Admitted)");
  run_to_completion(right);
  EXPECT_EQ(S.state(join), TaskState::Admitted);
}

TEST_F(Dependencies, OnACompletedTaskIsSatisfied) {
  TaskId done = S.submit({.name = "done"});
  run_to_completion(done);
  TaskId after = S.submit({.name = "after", .depends_on = {done}});
  EXPECT_EQ(S.state(after), TaskState::Admitted);
}

TEST_F(Dependencies, FailurePropagatesDownTheChain) {
  TaskId a = S.submit({.name = "a"});
  TaskId b = S.submit({.name = "b", .depends_on = {a}});
  TaskId c = S.submit({.name = "c", .depends_on = {b}});
  TaskId other = S.submit({.name = "other"});
  S.start(a);
  S.fail(a, "kernel fault");
  EXPECT_EQ(S.state(b), TaskState::Failed);
  EXPECT_EQ(S.state(c), TaskState::Failed);
  EXPECT_EQ(S.state(other), TaskState::Admitted);
  EXPECT_EQ(S.explain(b), "failed while Pending: dependency 'a' (#1) failed");
  EXPECT_EQ(S.explain(c), "failed while Pending: dependency 'b' (#2) failed");
  // Submitting after the failure fails at once.
  TaskId late = S.submit({.name = "late", .depends_on = {a}});
  EXPECT_EQ(S.state(late), TaskState::Failed);
  EXPECT_EQ(S.explain(late), "failed while Pending: dependency 'a' (#1) is Failed");
}

TEST_F(Dependencies, CancellationPropagatesAsFailure) {
  TaskId a = S.submit({.name = "a"});
  TaskId b = S.submit({.name = "b", .depends_on = {a}});
  S.cancel(a, "user abort");
  EXPECT_EQ(S.explain(a), "cancelled while Admitted: user abort");
  EXPECT_EQ(S.explain(b), "failed while Pending: dependency 'a' (#1) was cancelled");
}

TEST_F(Dependencies, UnknownDependencyIsAnError) {
  try {
    S.submit({.name = "orphan", .depends_on = {TaskId{42}}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "task 'orphan' depends on task #42, which was never submitted");
  }
}

TEST_F(Dependencies, CycleIsDetectedAndNamed) {
  TaskId blocker = S.submit({.name = "blocker"});
  TaskId a = S.submit({.name = "a", .depends_on = {blocker}});
  TaskId b = S.submit({.name = "b", .depends_on = {a}});
  TaskId c = S.submit({.name = "c", .depends_on = {b}});
  try {
    S.add_dependency(a, c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "task 'a' (#2) cannot depend on 'c' (#4): that closes the cycle 'a' -> 'c' -> 'b' -> "
                           "'a' (each waits for the next), so none of them could ever run");
  }
  try {
    S.add_dependency(a, a);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 'a' (#2) cannot depend on itself");
  }
  // The failed attempts changed nothing: the chain still runs in order.
  run_to_completion(blocker);
  EXPECT_EQ(S.state(a), TaskState::Admitted);
  run_to_completion(a);
  run_to_completion(b);
  EXPECT_EQ(S.state(c), TaskState::Admitted);
}

TEST_F(Dependencies, AddedDependencyHoldsAWaitingTask) {
  TaskId hog = S.submit({.name = "hog", .memory_request = 16 * GiB});
  TaskId first = S.submit({.name = "first", .memory_request = GiB});
  TaskId gate = S.submit({.name = "gate", .depends_on = {hog}});
  EXPECT_EQ(S.waiting(), 1u);
  S.add_dependency(first, gate);
  EXPECT_EQ(S.waiting(), 0u) << "waiting for a task is not waiting for memory";
  S.start(hog);
  S.complete(hog);
  EXPECT_EQ(S.state(gate), TaskState::Admitted);
  EXPECT_EQ(S.state(first), TaskState::Pending);
  run_to_completion(gate);
  EXPECT_EQ(S.state(first), TaskState::Admitted);
  EXPECT_THROW(S.add_dependency(first, hog), Error) << "only while Pending";
}

TEST(MemoryLimit, ExceedingTheLimitNamesTaskLimitAndRequest) {
  ManualClock clock;
  Scheduler s({.memory_capacity = 16 * GiB, .clock = &clock});
  TaskId id = s.submit({.name = "train", .memory_request = 2 * GiB, .memory_limit = 4 * GiB});
  Task& t = s.task(id);
  s.start(id);
  t.charge_memory(3 * GiB + 512 * MiB);
  try {
    t.charge_memory(GiB);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_STREQ(e.what(), "task 'train' (#1) exceeded its memory limit: allocating 1.0 GiB on top of the 3.5 GiB "
                           "it uses would reach 4.5 GiB, over its limit of 4.0 GiB (its request is 2.0 GiB); raise "
                           "TaskSpec::memory_limit or free memory first");
  }
  EXPECT_EQ(t.memory_used(), 3 * GiB + 512 * MiB) << "a refused charge changes nothing";
  t.charge_memory(512 * MiB); // exactly at the limit is fine
  EXPECT_EQ(t.memory_used(), 4 * GiB);
  t.release_memory(4 * GiB);
  EXPECT_EQ(t.memory_used(), 0u);
  EXPECT_EQ(t.memory_peak(), 4 * GiB);
  EXPECT_THROW(t.release_memory(1), Error);
  bool logged = false;
  for (const SchedulerEvent& e : s.events())
    logged |= e.kind == EventKind::LimitExceeded && e.task == id;
  EXPECT_TRUE(logged);
}

TEST(MemoryLimit, ChargesOnlyWhileAdmittedOrRunning) {
  Scheduler s({.memory_capacity = GiB});
  TaskId id = s.submit({.name = "t"});
  s.task(id).charge_memory(10);
  s.task(id).release_memory(10);
  s.cancel(id);
  try {
    s.task(id).charge_memory(MiB);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "cannot charge 1.0 MiB of memory to task 't' (#1): it is Cancelled, and memory belongs "
                           "to a task only while it is Admitted or Running");
  }
}

TEST(MemoryLimit, NoLimitMeansUnbounded) {
  Scheduler s({.memory_capacity = GiB});
  TaskId id = s.submit({.name = "t", .memory_request = GiB});
  s.task(id).charge_memory(1000 * GiB);
  EXPECT_EQ(s.task(id).memory_used(), 1000 * GiB);
}

} // namespace
} // namespace gpukit::rt::sched
