// Clock: where the scheduler and the dispatch controller read the time and
// how they wait. Production code uses SteadyClock; policy tests use
// ManualClock, whose time moves only when the test advances it or a waiting
// thread sleeps on it, so pacing and wait-time arithmetic is exact and the
// same on every CI run.
//
//   ManualClock clock;
//   Scheduler scheduler({.memory_capacity = 80ull << 30, .clock = &clock});
//   clock.advance(std::chrono::milliseconds(5));
//
// Time points are std::chrono::steady_clock::time_point; a ManualClock starts
// at that clock's epoch.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace gpukit::rt::sched {

using Nanos = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Nanos>;

class Clock {
public:
  virtual ~Clock() = default;

  virtual TimePoint now() const = 0;
  /// Returns no earlier than `deadline`.
  virtual void sleep_until(TimePoint deadline) = 0;
  void sleep_for(Nanos duration) { sleep_until(now() + duration); }
};

/// The process's monotonic clock. sleep_until() sleeps in the kernel for the
/// bulk of a wait and yields for the last stretch, because pacing waits are
/// often shorter than the ~60 us granularity of a Linux sleep.
class SteadyClock final : public Clock {
public:
  TimePoint now() const override {
    return std::chrono::time_point_cast<Nanos>(std::chrono::steady_clock::now());
  }
  void sleep_until(TimePoint deadline) override;

  /// The shared instance (stateless, so sharing it is free).
  static SteadyClock& instance();
};

/// A clock that stands still until told to move. sleep_until() moves it
/// forward to the deadline, so a policy that waits simply advances simulated
/// time. Thread-safe; time never goes backwards.
class ManualClock final : public Clock {
public:
  explicit ManualClock(Nanos start = Nanos(0)) : Ns(start.count()) {}

  TimePoint now() const override { return TimePoint(Nanos(Ns.load(std::memory_order_acquire))); }
  void sleep_until(TimePoint deadline) override { advance_to(deadline); }

  void advance(Nanos duration) { Ns.fetch_add(duration.count(), std::memory_order_acq_rel); }
  /// Moves the time to `t` if that is later than now.
  void advance_to(TimePoint t);
  /// Time since the clock's epoch, for assertions.
  Nanos elapsed() const { return Nanos(Ns.load(std::memory_order_acquire)); }

private:
  std::atomic<int64_t> Ns;
};

} // namespace gpukit::rt::sched
