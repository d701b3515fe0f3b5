// Pacing arithmetic: the token bucket with a ManualClock (exact integer
// results), and the percentile helpers behind the statistics.

#include "runtime/scheduler/clock.hpp"
#include "runtime/scheduler/stats.hpp"
#include "runtime/scheduler/token_bucket.hpp"
#include "runtime/scheduler/units.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <random>

namespace gpukit::rt::sched {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TokenBucket, StartsFullAndRefillsAtTheRate) {
  ManualClock clock;
  // 10 launches per second, burst 3.
  TokenBucket b(10, seconds(1), 3, clock.now());
  EXPECT_EQ(b.tokens(), 3);
  EXPECT_TRUE(b.try_take(1, clock.now()));
  EXPECT_TRUE(b.try_take(1, clock.now()));
  EXPECT_TRUE(b.try_take(1, clock.now()));
  EXPECT_FALSE(b.try_take(1, clock.now()));
  EXPECT_EQ(b.time_until(1, clock.now()), milliseconds(100));
  clock.advance(milliseconds(99));
  EXPECT_FALSE(b.try_take(1, clock.now()));
  EXPECT_EQ(b.time_until(1, clock.now()), milliseconds(1));
  clock.advance(milliseconds(1));
  EXPECT_TRUE(b.try_take(1, clock.now()));
  // Never above the burst, however long it idles.
  clock.advance(seconds(3600));
  b.refill(clock.now());
  EXPECT_EQ(b.tokens(), 3);
}

TEST(TokenBucket, FractionsCarryBetweenRefills) {
  ManualClock clock;
  // 3 tokens per 10 ns: one token every 3.33 ns. Refilling 1 ns at a time
  // must earn exactly what one 30 ns refill earns.
  TokenBucket stepwise(3, Nanos(10), 100, clock.now());
  TokenBucket at_once(3, Nanos(10), 100, clock.now());
  stepwise.charge(100, clock.now());
  at_once.charge(100, clock.now());
  for (int i = 0; i < 30; ++i) {
    clock.advance(Nanos(1));
    stepwise.refill(clock.now());
  }
  at_once.refill(clock.now());
  EXPECT_EQ(stepwise.tokens(), 9);
  EXPECT_EQ(at_once.tokens(), 9);
  EXPECT_EQ(stepwise.time_until(10, clock.now()), Nanos(4)); // ceil(10/3)
}

TEST(TokenBucket, GpuShareDebtAndRecovery) {
  ManualClock clock;
  // A quarter of GPU time per 100 ms: 25 ms of kernel time per window.
  TokenBucket b(25'000'000, milliseconds(100), 25'000'000, clock.now());
  b.charge(Nanos(milliseconds(10)).count(), clock.now());
  b.charge(Nanos(milliseconds(10)).count(), clock.now());
  EXPECT_EQ(b.tokens(), 5'000'000);
  b.charge(Nanos(milliseconds(10)).count(), clock.now()); // measured after the fact: debt
  EXPECT_EQ(b.tokens(), -5'000'000);
  // Back above zero after 5 ms / 0.25 = 20 ms (+1 ns for the first token).
  EXPECT_EQ(b.time_until(1, clock.now()), milliseconds(20) + Nanos(4));
  clock.advance(milliseconds(20));
  b.refill(clock.now());
  EXPECT_EQ(b.tokens(), 0);
  // Negative charges return tokens (an over-estimate corrected).
  b.charge(-2'000'000, clock.now());
  EXPECT_EQ(b.tokens(), 2'000'000);
}

TEST(TokenBucket, LargeNumbersDoNotOverflow) {
  ManualClock clock;
  TokenBucket b(1'000'000'000, seconds(10), 5'000'000'000, clock.now());
  b.charge(5'000'000'000, clock.now());
  clock.advance(seconds(86400) * 365);
  b.refill(clock.now());
  EXPECT_EQ(b.tokens(), 5'000'000'000);
  EXPECT_EQ(b.time_until(6'000'000'000, clock.now()), Nanos::max()) << "above the burst: never";
}

TEST(TokenBucket, RejectsEmptyBudgets) {
  EXPECT_THROW(TokenBucket(0, seconds(1), 1, TimePoint{}), Error);
  EXPECT_THROW(TokenBucket(1, Nanos(0), 1, TimePoint{}), Error);
  EXPECT_THROW(TokenBucket(1, seconds(1), 0, TimePoint{}), Error);
}

TEST(ManualClock, SleepingMovesTimeForward) {
  ManualClock clock(milliseconds(5));
  EXPECT_EQ(clock.elapsed(), milliseconds(5));
  clock.sleep_for(milliseconds(2));
  EXPECT_EQ(clock.elapsed(), milliseconds(7));
  clock.sleep_until(TimePoint(milliseconds(1))); // the past: no change
  EXPECT_EQ(clock.elapsed(), milliseconds(7));
}

TEST(SteadyClock, SleepsAtLeastTheTime) {
  SteadyClock& clock = SteadyClock::instance();
  TimePoint start = clock.now();
  clock.sleep_for(microseconds(300));
  EXPECT_GE(clock.now() - start, microseconds(300));
}

TEST(Percentiles, NearestRank) {
  std::vector<Nanos> v = {Nanos(4), Nanos(1), Nanos(3), Nanos(2)};
  EXPECT_EQ(percentile(v, 0.5), Nanos(2));
  EXPECT_EQ(percentile(v, 0.99), Nanos(4));
  std::vector<Nanos> hundred;
  for (int i = 100; i >= 1; --i)
    hundred.push_back(Nanos(i));
  EXPECT_EQ(percentile(hundred, 0.99), Nanos(99));
  EXPECT_EQ(percentile(hundred, 0.50), Nanos(50));
  Summary s = summarize(hundred);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.max, Nanos(100));
  EXPECT_EQ(s.total, Nanos(5050));
  std::vector<Nanos> none;
  EXPECT_EQ(percentile(none, 0.5), Nanos(0));
}

TEST(LatencyHistogram, WithinOneThirtySecond) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10.0, 1.5); // ~22 us median, wide spread
  LatencyHistogram h;
  std::vector<Nanos> exact;
  for (int i = 0; i < 20000; ++i) {
    Nanos v(static_cast<int64_t>(dist(rng)));
    h.add(v);
    exact.push_back(v);
  }
  for (double q : {0.5, 0.9, 0.99}) {
    double truth = static_cast<double>(percentile(exact, q).count());
    double approx = static_cast<double>(h.percentile(q).count());
    EXPECT_NEAR(approx, truth, truth / 32 + 1) << "q=" << q;
  }
  EXPECT_EQ(h.count(), 20000u);
  LatencyHistogram small;
  for (int i = 0; i < 16; ++i)
    small.add(Nanos(i));
  EXPECT_EQ(small.percentile(0.5), Nanos(7)) << "small values are exact";
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(uint64_t(6) << 30), "6.0 GiB");
  EXPECT_EQ(format_duration(Nanos(850)), "850 ns");
  EXPECT_EQ(format_duration(Nanos(12'345)), "12.3 us");
  EXPECT_EQ(format_duration(milliseconds(1) + microseconds(500)), "1.50 ms");
  EXPECT_EQ(format_duration(Nanos(-2'250'000'000)), "-2.25 s");
}

} // namespace
} // namespace gpukit::rt::sched
