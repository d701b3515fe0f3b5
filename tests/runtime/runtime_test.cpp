#include "runtime/runtime.hpp"

#include "child_process.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/memory_pool.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/runtime_info.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <numeric>

// The Runtime is a process-wide singleton read from the environment once,
// so every test that depends on the environment builds its Runtime in a
// forked child, with its stderr captured in a file.

namespace gpukit::rt {
namespace {

/// Runs `body` in a child whose stderr goes to a file; `body` gets the
/// file's contents through `stderr_text()` after it has flushed.
struct CapturedStderr {
  std::string Path;
  explicit CapturedStderr(const std::string& dir) : Path(dir + "/stderr.txt") {
    int fd = open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
  }
  std::string text() const {
    auto buffer = llvm::MemoryBuffer::getFile(Path);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }
};

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = test::fresh_directory(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  std::string Dir;
};

TEST_F(RuntimeTest, ForcedCpuBackend) {
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "cpu", 1);
    unsetenv("GPUKIT_QUIET");
    CapturedStderr err(Dir);
    Runtime& rt = Runtime::get();
    Runtime::get(); // the fallback line is printed once
    std::string problems;
    if (rt.backend() != Backend::Cpu || rt.on_gpu())
      problems += "backend is not Cpu; ";
    if (rt.fallback_reason() != "forced by GPUKIT_BACKEND=cpu")
      problems += fmt::format("reason '{}'; ", rt.fallback_reason());
    if (rt.arch() != "sm_90")
      problems += "arch " + rt.arch() + "; ";
    if (rt.device() || rt.stream() || rt.context())
      problems += "device, stream or context set; ";
    std::string text = err.text();
    if (text != "gpukit: Falling back to CPU simulation backend: forced by GPUKIT_BACKEND=cpu\n")
      problems += "stderr was '" + text + "'";
    return problems;
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, QuietSuppressesTheFallbackLine) {
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "cpu", 1);
    setenv("GPUKIT_QUIET", "1", 1);
    CapturedStderr err(Dir);
    Runtime::get();
    return err.text();
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, FallbackReasonWithoutDriver) {
  if (DriverApi::load())
    GTEST_SKIP() << "a CUDA driver is installed here";
  std::string report = test::run_in_child([&]() -> std::string {
    unsetenv("GPUKIT_BACKEND");
    unsetenv("GPUKIT_QUIET");
    CapturedStderr err(Dir);
    Runtime& rt = Runtime::get();
    std::string problems;
    if (rt.on_gpu())
      problems += "on GPU; ";
    std::string reason(rt.fallback_reason());
    if (reason.rfind("CUDA driver not detected", 0) != 0)
      problems += "reason '" + reason + "'; ";
    if (rt.driver())
      problems += "driver set; ";
    if (rt.nvrtc() != NvrtcApi::load())
      problems += "NVRTC not loaded on the CPU backend; ";
    std::string text = err.text();
    if (text != "gpukit: Falling back to CPU simulation backend: " + reason + "\n" || count_lines(text) != 1)
      problems += "stderr was '" + text + "'";
    return problems;
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, BadBackendIsAUsageError) {
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "tpu", 1);
    try {
      Runtime::get();
      return "no exception";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Usage || std::string(e.what()).find("'tpu'") == std::string::npos)
        return e.what();
    }
    return {};
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, RequiredGpuThrowsWithTheReason) {
  if (DriverApi::load())
    GTEST_SKIP() << "a CUDA driver is installed here";
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "gpu", 1);
    try {
      Runtime::get();
      return "no exception";
    } catch (const Error& e) {
      std::string what = e.what();
      if (e.kind() != ErrorKind::Unavailable || what.find("CUDA driver not detected") == std::string::npos)
        return what;
    }
    return {};
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, CpuCopiesRoundTripAndLaunchIsRefused) {
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "cpu", 1);
    setenv("GPUKIT_QUIET", "1", 1);
    Runtime& rt = Runtime::get();
    std::vector<float> in(1000), out(1000, -1.0f), back(1000, -2.0f);
    std::iota(in.begin(), in.end(), 0.5f);
    size_t bytes = in.size() * sizeof(float);
    Allocation a = rt.allocator().allocate(bytes);
    Allocation b = rt.allocator().allocate(bytes);
    rt.copy_to_device(a, in.data(), bytes);
    rt.copy_device_to_device(b, a, bytes);
    rt.synchronize();
    rt.copy_to_host(back.data(), b, bytes);
    std::string problems;
    if (back != in)
      problems += "round trip changed the data; ";
    try {
      rt.copy_to_host(out.data(), b, bytes + 4);
      problems += "an overrunning copy was accepted; ";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Usage)
        problems += e.what();
    }
    try {
      Kernel k;
      k.name = "k";
      rt.launch(k, {}, nullptr);
      problems += "launch on the CPU backend was accepted; ";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Usage)
        problems += e.what();
    }
    rt.allocator().deallocate(a);
    rt.allocator().deallocate(b);
    return problems;
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, CpuKernelCacheCompilesWithoutLoading) {
  if (!NvrtcApi::load())
    GTEST_SKIP() << NvrtcApi::load_error();
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "cpu", 1);
    setenv("GPUKIT_QUIET", "1", 1);
    setenv("GPUKIT_CACHE_DIR", Dir.c_str(), 1);
    Runtime& rt = Runtime::get();
    const Kernel& k = rt.kernels().get({"k", "extern \"C\" __global__ void k(int* p) { *p = 1; }\n"});
    if (k.function || k.cubin.empty())
      return "expected a compiled, unloaded kernel";
    if (rt.kernels().directory() != Dir)
      return "cache directory " + rt.kernels().directory();
    return {};
  });
  EXPECT_EQ(report, "");
}

TEST_F(RuntimeTest, DescribeRuntimeNamesEverything) {
  std::string report = test::run_in_child([&]() -> std::string {
    setenv("GPUKIT_BACKEND", "cpu", 1);
    setenv("GPUKIT_QUIET", "1", 1);
    setenv("GPUKIT_CACHE_DIR", Dir.c_str(), 1);
    std::string text = describe_runtime();
    std::string problems;
    for (const char* label : {"CUDA driver:", "NVRTC:", "Backend:", "Kernel cache:", "forced by GPUKIT_BACKEND=cpu"})
      if (text.find(label) == std::string::npos)
        problems += fmt::format("'{}' missing; ", label);
    if (text.find(Dir) == std::string::npos)
      problems += "cache directory missing; ";
    if (const NvrtcApi* nvrtc = NvrtcApi::load(); nvrtc && text.find(nvrtc->path) == std::string::npos)
      problems += "NVRTC path missing; ";
    return problems.empty() ? problems : problems + "\n" + text;
  });
  EXPECT_EQ(report, "");
}

// The CPU fallback's allocator is the memory pool over host memory.
TEST(HostAllocator, AlignsAndSizes) {
  std::unique_ptr<MemoryPool> pool = make_host_pool();
  MemoryPool& host = *pool;
  for (size_t bytes : {size_t(1), size_t(3), size_t(255), size_t(256), size_t(1000), size_t(1) << 20}) {
    Allocation a = host.allocate(bytes);
    ASSERT_TRUE(a);
    EXPECT_EQ(a.address % kAllocationAlignment, 0u) << bytes;
    EXPECT_EQ(a.bytes, bytes);
    std::memset(a.host_ptr(), 0xab, bytes); // the whole range is ours (ASan would tell)
    host.deallocate(a);
  }
  EXPECT_FALSE(host.allocate(0));
  host.deallocate(Allocation{});
}

TEST(HostAllocator, ImpossibleSizeIsOutOfMemory) {
  std::unique_ptr<MemoryPool> pool = make_host_pool();
  MemoryPool& host = *pool;
  try {
    host.allocate(~size_t(0) - 10);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
  }
}

// With the toolkit's stub libcuda on the loader path, the driver loads and
// cuInit fails: the reason must say so.
TEST_F(RuntimeTest, StubDriverFailsCuInit) {
  if (DriverApi::load())
    GTEST_SKIP() << "a real driver is installed";
  if (!llvm::sys::fs::exists("/usr/local/cuda/lib64/stubs/libcuda.so"))
    GTEST_SKIP() << "no CUDA stub library";
  std::string output;
  int status = test::run_command("env LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs GPUKIT_TEST_STUB_CHILD=1 "
                                 "GPUKIT_QUIET=1 '" + test::self_path() + "' --gtest_filter=RuntimeStubChild.*",
                                 output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

TEST(RuntimeStubChild, Run) {
  if (!std::getenv("GPUKIT_TEST_STUB_CHILD"))
    GTEST_SKIP() << "runs only inside RuntimeTest.StubDriverFailsCuInit";
  unsetenv("GPUKIT_BACKEND");
  Runtime& rt = Runtime::get();
  EXPECT_FALSE(rt.on_gpu());
  if (NvrtcApi::load()) {
    EXPECT_EQ(std::string(rt.fallback_reason()).rfind("CUDA driver not detected (cuInit: CUDA_ERROR_", 0), 0u)
        << rt.fallback_reason();
  }
}

} // namespace
} // namespace gpukit::rt
