#include "runtime/scheduler/clock.hpp"

#include <thread>

namespace gpukit::rt::sched {

void SteadyClock::sleep_until(TimePoint deadline) {
  // Sleeping overshoots by up to a scheduler tick; leave the last 100 us to
  // a yield loop so short pacing waits stay accurate.
  constexpr Nanos kSpinWindow = std::chrono::microseconds(100);
  TimePoint t = now();
  if (deadline - t > kSpinWindow)
    std::this_thread::sleep_for(deadline - t - kSpinWindow);
  while (now() < deadline)
    std::this_thread::yield();
}

SteadyClock& SteadyClock::instance() {
  static SteadyClock clock;
  return clock;
}

void ManualClock::advance_to(TimePoint t) {
  int64_t target = t.time_since_epoch().count();
  int64_t current = Ns.load(std::memory_order_acquire);
  while (current < target && !Ns.compare_exchange_weak(current, target, std::memory_order_acq_rel))
    ;
}

} // namespace gpukit::rt::sched
