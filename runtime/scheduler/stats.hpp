// Percentiles for the scheduler's statistics: exact ones over a handful of
// samples (wait and run times of the tasks of a class), and a lock-free
// log-linear histogram for quantities recorded per launch (kernel times),
// where keeping every sample would grow without bound.
//
//   Summary s = summarize({Nanos(3), Nanos(1), Nanos(2)});   // s.p50 == Nanos(2)
//   LatencyHistogram h;  h.add(Nanos(1200));  h.percentile(0.99);
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpukit::rt::sched {

using Nanos = std::chrono::nanoseconds;

struct Summary {
  size_t count = 0;
  Nanos p50{0};
  Nanos p99{0};
  Nanos max{0};
  Nanos total{0};
};

/// The nearest-rank percentile `q` (0 < q <= 1) of `samples`, which it
/// sorts; Nanos(0) when there are none. p50 of {1,2,3,4} is 2, p99 of 100
/// samples is the 99th smallest.
Nanos percentile(std::vector<Nanos>& samples, double q);

/// Count, p50, p99, max and total of `samples`.
Summary summarize(std::vector<Nanos> samples);

/// Durations in 16 linear sub-buckets per power of two: a percentile is
/// reported within 1/32 of the true value. add() is wait-free, so launch
/// paths on many threads may record into one histogram.
class LatencyHistogram {
public:
  void add(Nanos duration);

  uint64_t count() const { return Count.load(std::memory_order_relaxed); }
  Nanos total() const { return Nanos(TotalNs.load(std::memory_order_relaxed)); }
  /// The percentile `q` (0 < q <= 1), the midpoint of its bucket; 0 when empty.
  Nanos percentile(double q) const;
  Summary summary() const;

private:
  static constexpr unsigned kSubBits = 4;
  static constexpr unsigned kSub = 1u << kSubBits;
  // Values below kSub get a bucket each; above, 16 per power of two up to 2^63.
  static constexpr size_t kBuckets = kSub + (64 - kSubBits) * kSub;

  static size_t bucket_of(uint64_t value);
  static uint64_t bucket_low(size_t bucket);
  static uint64_t bucket_high(size_t bucket);

  std::array<std::atomic<uint64_t>, kBuckets> Buckets{};
  std::atomic<uint64_t> Count{0};
  std::atomic<uint64_t> TotalNs{0};
  std::atomic<uint64_t> MaxNs{0};
};

} // namespace gpukit::rt::sched
