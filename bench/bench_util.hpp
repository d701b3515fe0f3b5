// Helpers shared by the GPU benchmarks: medians, device timing of a
// callable (CUDA events, warm-up first), and a JSON line writer.
//
//   double ms = bench::median_ms(timer, [&] { out = x + y; }, /*reps=*/30);
#pragma once

#include "runtime/event_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace gpukit::bench {

inline double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

/// Median device time of `work` over `reps` runs, after `warmup` runs.
template <typename F> double median_ms(rt::EventTimer& timer, F&& work, int reps = 30, int warmup = 5) {
  for (int k = 0; k < warmup; ++k)
    work();
  std::vector<double> times;
  for (int k = 0; k < reps; ++k) {
    timer.start();
    work();
    times.push_back(timer.stop_ms());
  }
  return median(std::move(times));
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// GB/s for `bytes` moved in `ms` milliseconds.
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

} // namespace gpukit::bench
