// Every operation on every element type on the GPU, against the float64 /
// exact integer reference of op_reference.hpp, with fresh random inputs
// (the seed is printed, and GPUKIT_TEST_SEED=<n> replays it) and poisoned
// outputs. Skipped without a GPU.
#include "op_reference.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

namespace gpukit::testing {
namespace {

uint64_t fresh_seed() {
  static const uint64_t seed = [] {
    if (const char* s = std::getenv("GPUKIT_TEST_SEED"))
      return static_cast<uint64_t>(std::strtoull(s, nullptr, 10));
    return static_cast<uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
  }();
  return seed;
}

class GpuOps : public ::testing::TestWithParam<size_t> {
protected:
  static void SetUpTestSuite() {
    if (rt::Runtime::get().on_gpu())
      std::printf("gpu_ops_test: seed %llu (GPUKIT_TEST_SEED=%llu replays it)\n",
                  static_cast<unsigned long long>(fresh_seed()),
                  static_cast<unsigned long long>(fresh_seed()));
  }
  void SetUp() override {
    rt::Runtime& runtime = rt::Runtime::get();
    if (!runtime.on_gpu())
      GTEST_SKIP() << "no GPU: " << runtime.fallback_reason();
  }
};

TEST_P(GpuOps, MatchesReference) {
  const OpCase& c = op_cases()[GetParam()];
  RunOptions options;
  options.seed = fresh_seed() + GetParam();
  // The odd sizes defeat the packs; 1 << 20 + 3 runs the vectorised loop
  // over many blocks and a tail.
  options.sizes = {1, 3, 1023, 4097, (1 << 20) + 3};
  EXPECT_EQ(c.run(options), "") << c.name;
}

std::string gpu_test_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = op_cases()[info.param].name;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryOpEveryType, GpuOps, ::testing::Range<size_t>(0, op_cases().size()),
                         gpu_test_name);

} // namespace
} // namespace gpukit::testing
