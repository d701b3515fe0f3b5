// TokenBucket: the pacing arithmetic. A bucket gains `amount` tokens per
// `window` of time, continuously, and holds at most `burst`. The dispatch
// controller spends one token per launch (launch-rate pacing) or one per
// nanosecond of measured kernel time (GPU-share pacing); kernel time is known
// only after the kernel ran, so a bucket may go into debt, and the task waits
// until it is back above zero.
//
//   TokenBucket b(/*amount=*/25'000'000, /*window=*/100ms, /*burst=*/25'000'000, clock.now());
//   b.charge(10'000'000, clock.now());          // a 10 ms kernel
//   Nanos wait = b.time_until(1, clock.now());  // 0 while tokens remain
//
// The arithmetic is exact (integers, remainders carried), so tests with a
// ManualClock can assert equalities. Not thread-safe: callers lock.
#pragma once

#include "runtime/scheduler/clock.hpp"

#include <cstdint>

namespace gpukit::rt::sched {

class TokenBucket {
public:
  /// Starts full. `amount` and `window` must be positive and `burst` >= 1.
  TokenBucket(uint64_t amount, Nanos window, uint64_t burst, TimePoint now);

  /// Adds the tokens earned since the last refill, up to the burst.
  void refill(TimePoint now);
  /// Refills, then takes `n` tokens if at least `n` are there.
  bool try_take(int64_t n, TimePoint now);
  /// Refills, then takes `n` tokens (negative `n` returns tokens), going
  /// into debt when there are not enough.
  void charge(int64_t n, TimePoint now);
  /// How long from `now` until the bucket holds at least `n` tokens (0 when
  /// it already does). `n` above the burst can never be reached and yields
  /// Nanos::max().
  Nanos time_until(int64_t n, TimePoint now) const;

  /// Tokens after the last refill; negative while in debt.
  int64_t tokens() const { return Tokens; }
  uint64_t amount() const { return Amount; }
  Nanos window() const { return Window; }
  uint64_t burst() const { return Burst; }

private:
  uint64_t Amount;
  Nanos Window;
  int64_t Burst;
  int64_t Tokens;
  /// Fractional tokens carried between refills, in units of 1/Window-ns:
  /// always in [0, Window).
  int64_t Remainder = 0;
  TimePoint Last;
};

} // namespace gpukit::rt::sched
