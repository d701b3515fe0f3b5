// Many threads submitting, starting, completing and cancelling at once: no
// reservation is lost or counted twice (the sum returns to zero), the
// reservation never exceeds the capacity, and every task ends in a
// terminal state reached through legal transitions only.

#include "runtime/scheduler/scheduler.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace gpukit::rt::sched {
namespace {

constexpr uint64_t MiB = uint64_t(1) << 20;

class Watcher final : public TaskObserver {
public:
  std::atomic<int> illegal{0};
  std::atomic<int> transitions{0};
  void on_transition(Task&, TaskState from, TaskState to) override {
    ++transitions;
    if (!is_legal_transition(from, to))
      ++illegal;
  }
};

TEST(SchedulerThreads, SubmitAndCancelKeepsReservationsExact) {
  constexpr uint64_t kCapacity = 64 * MiB;
  Scheduler s({.memory_capacity = kCapacity});
  Watcher watcher;
  s.add_observer(&watcher);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 400;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> worst_reserved{0};
  std::thread monitor([&] {
    while (!stop.load()) {
      uint64_t r = s.reserved();
      uint64_t w = worst_reserved.load();
      while (r > w && !worst_reserved.compare_exchange_weak(w, r))
        ;
    }
  });

  std::vector<std::thread> threads;
  std::vector<std::vector<TaskId>> submitted(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::vector<TaskId>& mine = submitted[t];
      for (int i = 0; i < kPerThread; ++i) {
        TaskSpec spec;
        spec.qos = static_cast<QosClass>(rng() % 3);
        spec.priority = static_cast<int>(rng() % 5);
        spec.memory_request = (1 + rng() % 16) * MiB;
        // Some depend on a random earlier task of this thread, so
        // cancellations propagate while others admit.
        if (!mine.empty() && rng() % 4 == 0)
          spec.depends_on.push_back(mine[rng() % mine.size()]);
        TaskId id = s.submit(spec);
        mine.push_back(id);
        // Act on a random task of ours; any thread may have moved it since,
        // so an illegal request is possible and must be refused cleanly.
        TaskId target = mine[rng() % mine.size()];
        try {
          switch (rng() % 4) {
          case 0: s.cancel(target); break;
          case 1:
            s.start(target);
            break;
          case 2:
            if (s.state(target) == TaskState::Running)
              s.complete(target);
            break;
          case 3: s.fail(target, "test"); break;
          }
        } catch (const Error& e) {
          ASSERT_EQ(e.kind(), ErrorKind::Usage) << e.what();
        }
      }
    });
  }
  for (std::thread& th : threads)
    th.join();

  // Finish everything still live, from several threads at once.
  std::vector<std::thread> finishers;
  for (int t = 0; t < kThreads; ++t)
    finishers.emplace_back([&, t] {
      for (TaskId id : submitted[t]) {
        try {
          s.cancel(id);
        } catch (const Error& e) {
          ASSERT_EQ(e.kind(), ErrorKind::Usage);
          ASSERT_TRUE(is_terminal(s.state(id)));
        }
      }
    });
  for (std::thread& th : finishers)
    th.join();
  stop = true;
  monitor.join();

  EXPECT_EQ(s.reserved(), 0u) << "every reservation came back exactly once";
  EXPECT_EQ(s.waiting(), 0u);
  EXPECT_LE(worst_reserved.load(), kCapacity);
  EXPECT_EQ(watcher.illegal.load(), 0);
  EXPECT_EQ(s.task_count(), size_t(kThreads * kPerThread));
  for (uint64_t i = 1; i <= s.task_count(); ++i)
    EXPECT_TRUE(is_terminal(s.state(TaskId{i})));
  s.remove_observer(&watcher);
}

TEST(SchedulerThreads, WaitersAllWakeUp) {
  Scheduler s({.memory_capacity = 4 * MiB});
  TaskId hog = s.submit({.name = "hog", .memory_request = 4 * MiB});
  std::vector<TaskId> waiters;
  for (int i = 0; i < 4; ++i)
    waiters.push_back(s.submit({.name = "waiter", .memory_request = MiB}));
  std::vector<std::thread> threads;
  std::atomic<int> admitted{0};
  for (TaskId id : waiters)
    threads.emplace_back([&, id] {
      if (s.wait_admitted(id) == TaskState::Admitted)
        ++admitted;
    });
  s.start(hog);
  s.complete(hog);
  for (std::thread& th : threads)
    th.join();
  EXPECT_EQ(admitted.load(), 4);
  EXPECT_EQ(s.reserved(), 4 * MiB);
}

} // namespace
} // namespace gpukit::rt::sched
