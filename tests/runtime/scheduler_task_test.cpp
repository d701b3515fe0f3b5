// The task state machine: the transition table, and every request the
// Scheduler's API can make from every state (legal ones move the task,
// illegal ones throw Error{Usage} and leave it where it was).

#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/task.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <utility>

namespace gpukit::rt::sched {
namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;

constexpr TaskState kAllStates[] = {TaskState::Pending,   TaskState::Admitted, TaskState::Running,
                                    TaskState::Completed, TaskState::Failed,   TaskState::Cancelled};

TEST(TaskStateTable, ExactlyTheDocumentedTransitionsAreLegal) {
  using S = TaskState;
  const std::set<std::pair<S, S>> legal = {
      {S::Pending, S::Admitted},  {S::Pending, S::Failed},     {S::Pending, S::Cancelled},
      {S::Admitted, S::Running},  {S::Admitted, S::Failed},    {S::Admitted, S::Cancelled},
      {S::Running, S::Completed}, {S::Running, S::Failed},     {S::Running, S::Cancelled},
  };
  for (S from : kAllStates)
    for (S to : kAllStates)
      EXPECT_EQ(is_legal_transition(from, to), legal.count({from, to}) == 1)
          << to_string(from) << " -> " << to_string(to);
}

TEST(TaskStateTable, TerminalStatesHaveNoWayOut) {
  for (TaskState from : kAllStates) {
    bool any = false;
    for (TaskState to : kAllStates)
      any |= is_legal_transition(from, to);
    EXPECT_EQ(any, !is_terminal(from)) << to_string(from);
  }
  EXPECT_EQ(legal_transitions_from(TaskState::Completed), "none");
  EXPECT_EQ(legal_transitions_from(TaskState::Pending), "Admitted, Failed, Cancelled");
  EXPECT_EQ(legal_transitions_from(TaskState::Running), "Completed, Failed, Cancelled");
}

TEST(TaskStateTable, Names) {
  EXPECT_EQ(to_string(TaskState::Admitted), "Admitted");
  EXPECT_EQ(to_string(QosClass::BestEffort), "BestEffort");
}

/// A scheduler with a task parked in a chosen state.
class StateMachine : public ::testing::Test {
protected:
  ManualClock Clock;
  Scheduler S{{.memory_capacity = 8 * GiB, .clock = &Clock}};

  /// A task in `state`. Pending ones wait for an unfinished dependency.
  TaskId task_in(TaskState state) {
    if (state == TaskState::Pending) {
      TaskId blocker = S.submit({.name = "blocker"});
      return S.submit({.name = "t", .memory_request = GiB, .depends_on = {blocker}});
    }
    TaskId id = S.submit({.name = "t", .memory_request = GiB});
    EXPECT_EQ(S.state(id), TaskState::Admitted);
    switch (state) {
    case TaskState::Pending:
    case TaskState::Admitted: break;
    case TaskState::Running: S.start(id); break;
    case TaskState::Completed:
      S.start(id);
      S.complete(id);
      break;
    case TaskState::Failed: S.fail(id, "test"); break;
    case TaskState::Cancelled: S.cancel(id); break;
    }
    EXPECT_EQ(S.state(id), state);
    return id;
  }
};

struct Request {
  TaskState target;
  std::function<void(Scheduler&, TaskId)> make;
};

const Request kRequests[] = {
    {TaskState::Running, [](Scheduler& s, TaskId id) { s.start(id); }},
    {TaskState::Completed, [](Scheduler& s, TaskId id) { s.complete(id); }},
    {TaskState::Failed, [](Scheduler& s, TaskId id) { s.fail(id, "asked to"); }},
    {TaskState::Cancelled, [](Scheduler& s, TaskId id) { s.cancel(id); }},
};

TEST_F(StateMachine, EveryRequestFromEveryState) {
  for (TaskState from : kAllStates) {
    for (const Request& r : kRequests) {
      TaskId id = task_in(from);
      uint64_t reserved_before = S.reserved();
      if (is_legal_transition(from, r.target)) {
        EXPECT_NO_THROW(r.make(S, id)) << to_string(from) << " -> " << to_string(r.target);
        EXPECT_EQ(S.state(id), r.target);
        if (is_terminal(r.target) && (from == TaskState::Admitted || from == TaskState::Running)) {
          EXPECT_EQ(S.reserved(), reserved_before - GiB) << "the reservation comes back";
        }
        continue;
      }
      try {
        r.make(S, id);
        ADD_FAILURE() << to_string(from) << " -> " << to_string(r.target) << " did not throw";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        std::string expected = "cannot go from " + std::string(to_string(from)) + " to " +
                               std::string(to_string(r.target));
        EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      }
      EXPECT_EQ(S.state(id), from) << "an illegal request changes nothing";
      EXPECT_EQ(S.reserved(), reserved_before);
    }
  }
}

TEST_F(StateMachine, PendingToAdmittedHappensWhenMemoryFrees) {
  TaskId big = S.submit({.name = "big", .memory_request = 6 * GiB});
  TaskId next = S.submit({.name = "next", .memory_request = 4 * GiB});
  EXPECT_EQ(S.state(next), TaskState::Pending);
  S.start(big);
  S.complete(big);
  EXPECT_EQ(S.state(next), TaskState::Admitted);
}

TEST_F(StateMachine, IllegalTransitionMessageExplains) {
  TaskId id = task_in(TaskState::Completed);
  try {
    S.start(id);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 't' (#1) cannot go from Completed to Running: from Completed it may go to none "
                           "(it is completed: ran 0 ns after waiting 0 ns; 0 launches)");
  }
  TaskId pending = task_in(TaskState::Pending);
  try {
    S.start(pending);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 't' (#3) cannot go from Pending to Running: from Pending it may go to Admitted, "
                           "Failed, Cancelled (it is waiting for 1 unfinished task: 'blocker' (#2) (Admitted)); "
                           "call wait_admitted() first");
  }
}

TEST_F(StateMachine, EveryTransitionIsLogged) {
  TaskId id = S.submit({.name = "logged", .memory_request = GiB});
  S.start(id);
  S.complete(id);
  std::vector<std::pair<TaskState, TaskState>> seen;
  for (const SchedulerEvent& e : S.events())
    if (e.kind == EventKind::Transition && e.task == id)
      seen.emplace_back(e.from, e.to);
  std::vector<std::pair<TaskState, TaskState>> expected = {{TaskState::Pending, TaskState::Admitted},
                                                           {TaskState::Admitted, TaskState::Running},
                                                           {TaskState::Running, TaskState::Completed}};
  EXPECT_EQ(seen, expected);
}

TEST(TaskSpecValidation, LimitBelowRequest) {
  Scheduler s({.memory_capacity = 8 * GiB});
  try {
    s.submit({.name = "x", .memory_request = 2 * GiB, .memory_limit = GiB});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "task 'x' has a memory limit of 1.0 GiB below its request of 2.0 GiB; the limit is the "
                           "most it may use, so it must be at least the request");
  }
  EXPECT_EQ(s.task_count(), 0u);
}

TEST(TaskSpecValidation, PacingSpecs) {
  PacingSpec share = PacingSpec::gpu_share(0.25, std::chrono::milliseconds(100));
  EXPECT_EQ(share.unit, PacingSpec::Unit::GpuTime);
  EXPECT_EQ(share.amount, 25'000'000u);
  EXPECT_EQ(share.capacity(), 25'000'000u);
  EXPECT_EQ(share.describe(), "25% of GPU time per 100.00 ms");
  PacingSpec rate = PacingSpec::launches_per(1000, std::chrono::seconds(1));
  EXPECT_EQ(rate.describe(), "1000 launches per 1.00 s");
  EXPECT_THROW(PacingSpec::gpu_share(0.0), Error);
  EXPECT_THROW(PacingSpec::gpu_share(1.5), Error);
  EXPECT_THROW(PacingSpec::launches_per(0, std::chrono::seconds(1)), Error);
  Scheduler s({.memory_capacity = GiB});
  EXPECT_THROW(s.submit({.name = "empty", .pacing = PacingSpec{}}), Error);
}

TEST(TaskSpecValidation, UnnamedTasksGetANumber) {
  Scheduler s({.memory_capacity = GiB});
  TaskId id = s.submit({});
  EXPECT_EQ(s.task(id).name(), "task1");
}

} // namespace
} // namespace gpukit::rt::sched
