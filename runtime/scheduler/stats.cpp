#include "runtime/scheduler/stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpukit::rt::sched {

Nanos percentile(std::vector<Nanos>& samples, double q) {
  if (samples.empty())
    return Nanos(0);
  std::sort(samples.begin(), samples.end());
  // Nearest rank: the smallest sample with at least q of all samples at or below it.
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
  rank = std::clamp<size_t>(rank, 1, samples.size());
  return samples[rank - 1];
}

Summary summarize(std::vector<Nanos> samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty())
    return s;
  for (Nanos v : samples)
    s.total += v;
  s.p50 = percentile(samples, 0.50);
  s.p99 = percentile(samples, 0.99);
  s.max = samples.back(); // sorted by percentile()
  return s;
}

size_t LatencyHistogram::bucket_of(uint64_t value) {
  if (value < kSub)
    return static_cast<size_t>(value);
  unsigned exponent = 63 - static_cast<unsigned>(std::countl_zero(value)); // >= kSubBits
  uint64_t sub = (value >> (exponent - kSubBits)) & (kSub - 1);
  return kSub + (exponent - kSubBits) * kSub + static_cast<size_t>(sub);
}

uint64_t LatencyHistogram::bucket_low(size_t bucket) {
  if (bucket < kSub)
    return bucket;
  size_t exponent = (bucket - kSub) / kSub + kSubBits;
  uint64_t sub = (bucket - kSub) % kSub;
  return (uint64_t(1) << exponent) + (sub << (exponent - kSubBits));
}

uint64_t LatencyHistogram::bucket_high(size_t bucket) {
  if (bucket < kSub)
    return bucket;
  size_t exponent = (bucket - kSub) / kSub + kSubBits;
  return bucket_low(bucket) + (uint64_t(1) << (exponent - kSubBits)) - 1;
}

void LatencyHistogram::add(Nanos duration) {
  uint64_t value = duration.count() > 0 ? static_cast<uint64_t>(duration.count()) : 0;
  Buckets[bucket_of(value)].fetch_add(1, std::memory_order_relaxed);
  Count.fetch_add(1, std::memory_order_relaxed);
  TotalNs.fetch_add(value, std::memory_order_relaxed);
  uint64_t max = MaxNs.load(std::memory_order_relaxed);
  while (value > max && !MaxNs.compare_exchange_weak(max, value, std::memory_order_relaxed))
    ;
}

Nanos LatencyHistogram::percentile(double q) const {
  uint64_t n = count();
  if (n == 0)
    return Nanos(0);
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<uint64_t>(rank, 1, n);
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += Buckets[b].load(std::memory_order_relaxed);
    if (seen >= rank) {
      uint64_t mid = bucket_low(b) + (bucket_high(b) - bucket_low(b)) / 2;
      // The bucket midpoint can exceed the largest value seen; never report more.
      return Nanos(static_cast<int64_t>(std::min(mid, MaxNs.load(std::memory_order_relaxed))));
    }
  }
  // Adds racing with this read can leave the bucket sum short of `n`.
  return Nanos(static_cast<int64_t>(MaxNs.load(std::memory_order_relaxed)));
}

Summary LatencyHistogram::summary() const {
  Summary s;
  s.count = static_cast<size_t>(count());
  s.total = total();
  s.max = Nanos(static_cast<int64_t>(MaxNs.load(std::memory_order_relaxed)));
  s.p50 = percentile(0.50);
  s.p99 = percentile(0.99);
  return s;
}

} // namespace gpukit::rt::sched
