// Arrays larger than the memory quota: the pool spills least recently used
// arrays to pinned host memory and the engines' pins bring them back. The
// Runtime is a process singleton that reads GPUKIT_MEMORY_QUOTA once, so the
// bodies (SpillChild.*) run in a fresh process of this binary with the quota
// set; SpillTest.* starts it and checks it passed. On the GPU the same test
// spills device memory; on the CPU fallback the host pool spills.
#include "dsl/gpukit.hpp"
#include "runtime/memory_pool.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include "../runtime/child_process.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace gpukit {
namespace {

constexpr size_t kQuota = 8u << 20;          // GPUKIT_MEMORY_QUOTA=8M in the child
constexpr int64_t kElements = (3 << 20) / 8; // 1.5 MiB of floats per array
constexpr int kArrays = 8;                   // 12 MiB in all: 1.5x the quota

bool in_child() { return std::getenv("GPUKIT_SPILL_CHILD") != nullptr; }

/// Runs this binary's SpillChild.`name` in a fresh process with the quota.
void run_child(const std::string& name) {
  std::string output;
  int status = test::run_command(
      fmt::format("env GPUKIT_SPILL_CHILD=1 GPUKIT_MEMORY_QUOTA=8M GPUKIT_QUIET=1 '{}' "
                  "--gtest_filter=SpillChild.{}",
                  test::self_path(), name),
      output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

TEST(SpillTest, WorkloadOfOneAndAHalfQuotas) { run_child("WorkloadOfOneAndAHalfQuotas"); }
TEST(SpillTest, PinnedOperandsOverQuota) { run_child("PinnedOperandsOverQuota"); }

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(gen);
  return v;
}

// A chain of expressions over every array, each step touching arrays spilled
// by earlier ones: results must match a float64 host reference, and the pool
// must have spilled and restored.
TEST(SpillChild, WorkloadOfOneAndAHalfQuotas) {
  if (!in_child())
    GTEST_SKIP() << "runs in a child process started by SpillTest";
  rt::MemoryPool& pool = rt::Runtime::get().memory_pool();
  ASSERT_EQ(pool.quota(), kQuota);

  const size_t n = static_cast<size_t>(kElements);
  std::vector<std::vector<double>> want(kArrays);
  std::vector<Array<float>> arrays;
  for (int k = 0; k < kArrays; ++k) {
    std::vector<float> values = random_values(n, 100u + k);
    want[k].assign(values.begin(), values.end());
    arrays.push_back(Array<float>::from_host(values, Shape(kElements)));
  }
  // Two rounds of a[k] = 0.5 * a[k] + a[k-1] - a[k+1] (in place, neighbours
  // wrapping around), so every step needs three arrays resident.
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < kArrays; ++k) {
      int prev = (k + kArrays - 1) % kArrays, next = (k + 1) % kArrays;
      arrays[k] = 0.5f * arrays[k] + arrays[prev] - arrays[next];
      for (size_t i = 0; i < n; ++i)
        want[k][i] = static_cast<double>(static_cast<float>(0.5 * want[k][i] + want[prev][i] - want[next][i]));
    }
  }
  for (int k = 0; k < kArrays; ++k) {
    std::vector<float> got = arrays[k].to_host();
    ASSERT_EQ(got.size(), n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
      bad += !(std::abs(got[i] - want[k][i]) <= 1e-5 * (1.0 + std::abs(want[k][i])));
    EXPECT_EQ(bad, 0u) << "array " << k;
  }
  rt::MemoryPoolStats stats = pool.stats();
  EXPECT_GT(stats.spills, 0u) << stats.summary();
  EXPECT_GT(stats.restores, 0u) << stats.summary();
  EXPECT_LE(stats.peak_reserved, kQuota) << stats.summary();
  std::printf("spill workload: %s\n", stats.summary().c_str());
}

// One expression whose operands alone exceed the quota: every operand is
// pinned, so nothing can be spilled and the pool's OutOfMemory error says so.
TEST(SpillChild, PinnedOperandsOverQuota) {
  if (!in_child())
    GTEST_SKIP() << "runs in a child process started by SpillTest";
  const int64_t quarter = static_cast<int64_t>(kQuota / 4 / sizeof(float)) + 4096;
  // Three arrays of a bit more than a quarter quota fit (spilling if
  // needed); an expression over all three plus an output does not.
  std::vector<Array<float>> in;
  for (int k = 0; k < 3; ++k)
    in.push_back(Array<float>::full(Shape(quarter), static_cast<float>(k)));
  Array<float> out{Shape(quarter)};
  try {
    out = in[0] + in[1] + in[2];
    FAIL() << "no OutOfMemory for four pinned operands of "
           << 4 * quarter * sizeof(float) << " bytes under a quota of " << kQuota;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
    EXPECT_NE(std::string(e.what()).find("quota"), std::string::npos) << e.what();
    std::printf("OOM message: %s\n", e.what());
  }
  // Still usable afterwards: the pins were released.
  out = in[0] + in[1];
  std::vector<float> got = out.to_host();
  EXPECT_EQ(got.front(), 1.0f);
  EXPECT_EQ(got.back(), 1.0f);
}

} // namespace
} // namespace gpukit
