// Admission control: order under contention (class, then priority, then
// submission; strictly in line), rejection of requests that can never fit
// (with the numbers), explain() texts, and capacity changes.

#include "runtime/scheduler/admission.hpp"
#include "runtime/scheduler/scheduler.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpukit::rt::sched {
namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;
constexpr uint64_t MiB = uint64_t(1) << 20;

std::vector<uint64_t> ids(const std::vector<AdmissionRequest>& requests) {
  std::vector<uint64_t> out;
  for (const AdmissionRequest& r : requests)
    out.push_back(r.id.value);
  return out;
}

TEST(AdmissionQueue, OrdersByClassThenPriorityThenSubmission) {
  AdmissionQueue q(100);
  q.enqueue({TaskId{1}, QosClass::BestEffort, 9, 1, 10});
  q.enqueue({TaskId{2}, QosClass::Burstable, 0, 2, 10});
  q.enqueue({TaskId{3}, QosClass::Guaranteed, 0, 3, 10});
  q.enqueue({TaskId{4}, QosClass::Burstable, 5, 4, 10});
  q.enqueue({TaskId{5}, QosClass::Guaranteed, 0, 5, 10});
  EXPECT_EQ(ids(q.admit()), (std::vector<uint64_t>{3, 5, 4, 2, 1}));
  EXPECT_EQ(q.reserved(), 50u);
  EXPECT_EQ(q.unreserved(), 50u);
  q.release(50);
  EXPECT_EQ(q.reserved(), 0u);
}

TEST(AdmissionQueue, StrictlyInLine) {
  AdmissionQueue q(100);
  q.enqueue({TaskId{1}, QosClass::Burstable, 0, 1, 70});
  EXPECT_EQ(ids(q.admit()), (std::vector<uint64_t>{1}));
  q.enqueue({TaskId{2}, QosClass::Guaranteed, 0, 2, 50}); // does not fit now
  q.enqueue({TaskId{3}, QosClass::BestEffort, 0, 3, 10}); // would fit, but waits behind 2
  EXPECT_TRUE(q.admit().empty());
  std::optional<QueuePosition> pos = q.position(TaskId{3});
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->ahead_total(), 1u);
  EXPECT_EQ(pos->ahead[size_t(QosClass::Guaranteed)], 1u);
  EXPECT_EQ(pos->head.id, TaskId{2});
  q.release(70);
  EXPECT_EQ(ids(q.admit()), (std::vector<uint64_t>{2, 3}));
}

TEST(AdmissionQueue, RemoveAndUnsatisfiable) {
  AdmissionQueue q(100);
  q.enqueue({TaskId{1}, QosClass::Burstable, 0, 1, 200});
  q.enqueue({TaskId{2}, QosClass::Burstable, 0, 2, 20});
  EXPECT_TRUE(q.remove(TaskId{2}));
  EXPECT_FALSE(q.remove(TaskId{2}));
  EXPECT_EQ(ids(q.take_unsatisfiable()), (std::vector<uint64_t>{1}));
  EXPECT_EQ(q.waiting(), 0u);
  EXPECT_THROW(q.release(1), Error);
}

class Admission : public ::testing::Test {
protected:
  ManualClock Clock;
  Scheduler S{{.memory_capacity = 10 * GiB, .clock = &Clock}};
};

TEST_F(Admission, OrderUnderContention) {
  TaskId hog = S.submit({.name = "hog", .memory_request = 10 * GiB});
  ASSERT_EQ(S.state(hog), TaskState::Admitted);
  // Everyone else waits; they are admitted by class, priority, submission.
  TaskId be = S.submit({.name = "be", .qos = QosClass::BestEffort, .memory_request = 2 * GiB, .priority = 100});
  TaskId b_low = S.submit({.name = "b-low", .memory_request = 2 * GiB, .priority = 1});
  TaskId g1 = S.submit({.name = "g1", .qos = QosClass::Guaranteed, .memory_request = 2 * GiB});
  TaskId b_high = S.submit({.name = "b-high", .memory_request = 2 * GiB, .priority = 7});
  TaskId g2 = S.submit({.name = "g2", .qos = QosClass::Guaranteed, .memory_request = 2 * GiB});
  TaskId late = S.submit({.name = "late", .memory_request = 4 * GiB});
  EXPECT_EQ(S.waiting(), 6u);

  S.start(hog);
  S.complete(hog);
  // 10 GiB free: g1, g2, b-high, b-low fit (8 GiB); "late" (4 GiB) is next
  // in line and does not fit, so "be" waits behind it even though it fits.
  for (TaskId id : {g1, g2, b_high, b_low})
    EXPECT_EQ(S.state(id), TaskState::Admitted) << S.task(id).name();
  EXPECT_EQ(S.state(late), TaskState::Pending);
  EXPECT_EQ(S.state(be), TaskState::Pending);
  EXPECT_EQ(S.reserved(), 8 * GiB);

  std::vector<std::string> order;
  for (const SchedulerEvent& e : S.events())
    if (e.kind == EventKind::Transition && e.to == TaskState::Admitted)
      order.push_back(e.task_name);
  EXPECT_EQ(order, (std::vector<std::string>{"hog", "g1", "g2", "b-high", "b-low"}));

  S.cancel(g1);
  EXPECT_EQ(S.state(late), TaskState::Admitted);
  EXPECT_EQ(S.state(be), TaskState::Pending);
  S.cancel(g2);
  EXPECT_EQ(S.state(be), TaskState::Admitted);
  EXPECT_EQ(S.reserved(), 2 * GiB + 2 * GiB + 4 * GiB + 2 * GiB);
}

TEST_F(Admission, RequestLargerThanTheDeviceIsRejectedAtOnce) {
  try {
    S.submit({.name = "huge", .memory_request = 12 * GiB});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_STREQ(e.what(), "task 'huge' requests 12.0 GiB of device memory, more than the device can ever promise: "
                           "10.0 GiB (the memory pool's quota); lower TaskSpec::memory_request or raise the pool's "
                           "quota");
  }
  EXPECT_EQ(S.task_count(), 0u);
  ASSERT_FALSE(S.events().empty());
  EXPECT_EQ(S.events().back().kind, EventKind::Rejected);
  // Exactly the capacity is fine.
  TaskId whole = S.submit({.name = "whole", .memory_request = 10 * GiB});
  EXPECT_EQ(S.state(whole), TaskState::Admitted);
}

TEST_F(Admission, ExplainWaiting) {
  Scheduler s({.memory_capacity = 79 * GiB + 100 * MiB, .clock = &Clock});
  TaskId base = s.submit({.name = "base", .memory_request = 74 * GiB + 900 * MiB});
  EXPECT_EQ(s.explain(base), "admitted: 74.9 GiB reserved after waiting 0 ns; ready to start");
  TaskId g1 = s.submit({.name = "g1", .qos = QosClass::Guaranteed, .memory_request = 5 * GiB});
  TaskId g2 = s.submit({.name = "g2", .qos = QosClass::Guaranteed, .memory_request = 5 * GiB});
  TaskId b = s.submit({.name = "b", .memory_request = 6 * GiB});
  EXPECT_EQ(s.explain(g1), "waiting: requests 5.0 GiB, 4.2 GiB unreserved of 79.1 GiB; first in line");
  EXPECT_EQ(s.explain(b), "waiting: requests 6.0 GiB, 4.2 GiB unreserved of 79.1 GiB; 2 Guaranteed tasks ahead");
  TaskId small = s.submit({.name = "small", .qos = QosClass::BestEffort, .memory_request = GiB});
  EXPECT_EQ(s.explain(small), "waiting: requests 1.0 GiB, 4.2 GiB unreserved of 79.1 GiB; 2 Guaranteed and 1 "
                              "Burstable tasks ahead (first in line: 'g1' (#2) needs 5.0 GiB)");
  (void)g2;
}

TEST_F(Admission, ExplainEveryState) {
  TaskId t = S.submit({.name = "t", .memory_request = GiB, .memory_limit = 2 * GiB});
  Clock.advance(std::chrono::milliseconds(3));
  S.start(t);
  S.task(t).charge_memory(512 * MiB);
  Clock.advance(std::chrono::milliseconds(5));
  EXPECT_EQ(S.explain(t), "running for 5.00 ms: 0 launches, 0 B transferred, 512.0 MiB in use (request 1.0 GiB, "
                          "limit 2.0 GiB)");
  S.complete(t);
  EXPECT_EQ(S.explain(t), "completed: ran 5.00 ms after waiting 0 ns; 0 launches");
  TaskId f = S.submit({.name = "f"});
  S.fail(f, "the input was empty");
  EXPECT_EQ(S.explain(f), "failed while Admitted: the input was empty");
  TaskId c = S.submit({.name = "c"});
  S.start(c);
  S.cancel(c);
  EXPECT_EQ(S.explain(c), "cancelled while Running");
}

TEST_F(Admission, ShrinkingCapacityFailsWhatCanNeverFit) {
  TaskId hog = S.submit({.name = "hog", .memory_request = 6 * GiB});
  TaskId big = S.submit({.name = "big", .memory_request = 8 * GiB});
  TaskId small = S.submit({.name = "small", .memory_request = GiB});
  EXPECT_EQ(S.state(big), TaskState::Pending);
  EXPECT_EQ(S.state(small), TaskState::Pending);
  S.set_capacity(7 * GiB);
  EXPECT_EQ(S.state(big), TaskState::Failed);
  EXPECT_EQ(S.explain(big), "failed while Pending: it requests 8.0 GiB, more than the device can now ever promise: "
                            "7.0 GiB (the memory pool's quota shrank)");
  EXPECT_EQ(S.state(small), TaskState::Admitted) << "the head left the line";
  EXPECT_EQ(S.reserved(), 7 * GiB);
  S.cancel(hog);
  S.cancel(small);
  EXPECT_EQ(S.reserved(), 0u);
}

TEST_F(Admission, WaitAdmittedBlocksUntilMemoryFrees) {
  TaskId hog = S.submit({.name = "hog", .memory_request = 10 * GiB});
  TaskId next = S.submit({.name = "next", .memory_request = GiB});
  std::thread releaser([&] {
    S.start(hog);
    S.complete(hog);
  });
  EXPECT_EQ(S.wait_admitted(next), TaskState::Admitted);
  releaser.join();
  TaskId doomed = S.submit({.name = "doomed", .depends_on = {next}});
  std::thread failer([&] { S.fail(next, "boom"); });
  EXPECT_EQ(S.wait_admitted(doomed), TaskState::Failed);
  EXPECT_EQ(S.wait_finished(next), TaskState::Failed);
  failer.join();
}

} // namespace
} // namespace gpukit::rt::sched
