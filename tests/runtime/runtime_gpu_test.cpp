// The Runtime on a real GPU. Skipped (with the reason) where there is none.
// The Runtime is a process-wide singleton, and a CUDA context does not
// survive fork(), so the checks run as the RuntimeGpuChild suite in a fresh
// process started by RuntimeGpu.InAFreshProcess.

#include "runtime/runtime.hpp"

#include "child_process.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/runtime_info.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>

namespace gpukit::rt {
namespace {

bool in_gpu_child() { return std::getenv("GPUKIT_TEST_GPU_CHILD") != nullptr; }

TEST(RuntimeGpu, InAFreshProcess) {
  if (in_gpu_child())
    GTEST_SKIP() << "this is the child";
  if (!DriverApi::load())
    GTEST_SKIP() << "no GPU here: " << DriverApi::load_error();
  std::string output;
  int status = test::run_command("env GPUKIT_TEST_GPU_CHILD=1 GPUKIT_BACKEND=gpu '" + test::self_path() +
                                     "' --gtest_filter='RuntimeGpuChild.*'",
                                 output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output.find("FAILED"), std::string::npos) << output;
  std::printf("%s", output.c_str());
}

class RuntimeGpuChild : public ::testing::Test {
protected:
  void SetUp() override {
    if (!in_gpu_child())
      GTEST_SKIP() << "runs only inside RuntimeGpu.InAFreshProcess";
  }
};

constexpr const char* Saxpy = R"(extern "C" __global__ void saxpy_gpu_test(float a, const float* __restrict__ x,
                                          float* __restrict__ y, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}
)";

/// Runs y = a*x + y on the GPU for fresh random data and returns the largest
/// relative error against a float64 reference (NaN if any element is NaN).
double saxpy_error(Runtime& rt, const Kernel& kernel, unsigned n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  std::vector<float> x(n), y(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  float a = dist(rng);
  size_t bytes = n * sizeof(float);
  Allocation dx = rt.allocator().allocate(bytes);
  Allocation dy = rt.allocator().allocate(bytes);
  rt.copy_to_device(dx, x.data(), bytes);
  rt.copy_to_device(dy, y.data(), bytes);
  CUdeviceptr px = dx.device_ptr(), py = dy.device_ptr();
  void* args[] = {&a, &px, &py, &n};
  rt.launch(kernel, {(n + 255) / 256, 256, 0}, args);
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN()); // poisoned
  rt.copy_to_host(out.data(), dy, bytes);
  rt.allocator().deallocate(dx);
  rt.allocator().deallocate(dy);
  double worst = 0;
  for (unsigned i = 0; i < n; ++i) {
    double expected = static_cast<double>(a) * x[i] + y[i];
    double error = std::fabs(out[i] - expected) / std::max(1.0, std::fabs(expected));
    if (!(error <= worst)) // NaN propagates
      worst = error;
  }
  return worst;
}

TEST_F(RuntimeGpuChild, PicksTheGpu) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  ASSERT_NE(rt.device(), nullptr);
  EXPECT_TRUE(rt.fallback_reason().empty());
  EXPECT_EQ(rt.arch(), rt.device()->arch());
  EXPECT_GE(rt.device()->sm_major, 8);
  EXPECT_GT(rt.device()->sm_count, 0);
  EXPECT_GT(rt.device()->total_memory, size_t(1) << 30);
  EXPECT_GT(rt.device()->l2_bytes, 0u);
  EXPECT_GT(rt.device()->max_threads_per_sm, 0);
  EXPECT_GE(rt.device()->driver_version, 12000);
  EXPECT_NE(rt.stream(), nullptr);
  EXPECT_NE(rt.context(), nullptr);
  EXPECT_NE(rt.driver(), nullptr);
  std::string info = describe_runtime();
  EXPECT_NE(info.find(rt.device()->name), std::string::npos) << info;
  EXPECT_NE(info.find("[in use]"), std::string::npos) << info;
  std::printf("%s", info.c_str());
}

TEST_F(RuntimeGpuChild, SaxpyMatchesFloat64Reference) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  const Kernel& kernel = rt.kernels().get({"saxpy_gpu_test", Saxpy});
  ASSERT_NE(kernel.function, nullptr);
  // float32 a*x+y (maybe fused) against float64: within a few ulp of the result.
  constexpr double Tolerance = 1e-6;
  for (unsigned n : {1u, 255u, 257u, 1u << 20})
    EXPECT_LE(saxpy_error(rt, kernel, n, n), Tolerance) << "n = " << n;
}

TEST_F(RuntimeGpuChild, WorksFromAnotherThread) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  double error = -1;
  std::string failure;
  // A new thread has no current context: the runtime must set it itself.
  std::thread worker([&] {
    try {
      const Kernel& kernel = rt.kernels().get({"saxpy_gpu_test_thread", std::string(Saxpy).replace(
                                                                          std::string(Saxpy).find("saxpy_gpu_test"),
                                                                          14, "saxpy_gpu_test_thread")});
      error = saxpy_error(rt, kernel, 4096, 7);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  worker.join();
  EXPECT_EQ(failure, "");
  EXPECT_LE(error, 1e-6);
  EXPECT_GE(error, 0);
}

TEST_F(RuntimeGpuChild, AllocationsAreAlignedAndCopiesRoundTrip) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  std::vector<Allocation> held;
  for (size_t bytes : {size_t(1), size_t(3), size_t(1000), size_t(1) << 20}) {
    held.push_back(rt.allocator().allocate(bytes));
    EXPECT_EQ(held.back().address % kAllocationAlignment, 0u) << bytes;
  }
  std::vector<uint8_t> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<uint8_t>(i * 7 + 3);
  rt.copy_to_device(held[2], in.data(), in.size());
  rt.copy_device_to_device(held[3], held[2], in.size());
  rt.copy_to_host(out.data(), held[3], in.size());
  EXPECT_EQ(in, out);
  for (Allocation a : held)
    rt.allocator().deallocate(a);
}

TEST_F(RuntimeGpuChild, OutOfMemoryNamesTheNumbers) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  try {
    rt.allocator().allocate(size_t(1) << 50); // 1 PiB
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << what;
    EXPECT_NE(what.find("1024.00 TiB"), std::string::npos) << what;
    EXPECT_NE(what.find("free"), std::string::npos) << what;
  }
}

TEST_F(RuntimeGpuChild, BadLaunchIsADriverErrorNamingTheKernel) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  const Kernel& kernel = rt.kernels().get({"saxpy_gpu_test", Saxpy});
  float a = 1;
  CUdeviceptr p = 0;
  unsigned n = 0;
  void* args[] = {&a, &p, &p, &n};
  try {
    rt.launch(kernel, {1, 4096, 0}, args); // more threads than a block may have
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Driver);
    EXPECT_NE(std::string(e.what()).find("saxpy_gpu_test"), std::string::npos) << e.what();
  }
  // The error is not sticky: the runtime still works.
  EXPECT_LE(saxpy_error(rt, kernel, 1000, 3), 1e-6);
}

TEST_F(RuntimeGpuChild, DiskCachedKernelLoadsAndRuns) {
  Runtime& rt = Runtime::get();
  ASSERT_TRUE(rt.on_gpu()) << rt.fallback_reason();
  std::string dir = test::fresh_directory("gpu-disk-cache");
  std::string source = std::string(Saxpy);
  {
    KernelCache first(rt.nvrtc(), rt.driver(), rt.arch(), KernelCacheConfig{rt.context(), dir});
    EXPECT_FALSE(first.get({"saxpy_gpu_test", source}).from_disk);
  }
  KernelCache second(rt.nvrtc(), rt.driver(), rt.arch(), KernelCacheConfig{rt.context(), dir});
  const Kernel& kernel = second.get({"saxpy_gpu_test", source});
  EXPECT_TRUE(kernel.from_disk);
  ASSERT_NE(kernel.function, nullptr);
  EXPECT_LE(saxpy_error(rt, kernel, 10000, 11), 1e-6);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
} // namespace gpukit::rt
