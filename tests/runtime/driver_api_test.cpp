#include "runtime/driver_api.hpp"

#include "child_process.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

#include <cstdlib>

namespace gpukit::rt {
namespace {

TEST(DriverApi, LoadReportsAMissingDriverExactly) {
  const DriverApi* api = DriverApi::load();
  if (api)
    GTEST_SKIP() << "a CUDA driver is installed here; the missing-driver message cannot be checked";
  // "CUDA driver not detected (libcuda.so.1: <dlerror>)"
  EXPECT_EQ(DriverApi::load_error().rfind("CUDA driver not detected (libcuda.so.1: ", 0), 0u)
      << DriverApi::load_error();
  EXPECT_EQ(DriverApi::load_error().back(), ')');
}

TEST(DriverApi, LoadIsStable) {
  EXPECT_EQ(DriverApi::load(), DriverApi::load());
  EXPECT_EQ(&DriverApi::load_error(), &DriverApi::load_error());
}

TEST(DriverApi, LoadResolvesEveryEntryPoint) {
  const DriverApi* api = DriverApi::load();
  if (!api)
    GTEST_SKIP() << DriverApi::load_error();
  EXPECT_TRUE(DriverApi::load_error().empty());
#define GPUKIT_EXPECT_RESOLVED(name) EXPECT_NE(api->name, nullptr) << #name;
  GPUKIT_DRIVER_FUNCTIONS(GPUKIT_EXPECT_RESOLVED)
#undef GPUKIT_EXPECT_RESOLVED
}

TEST(DriverApi, CheckThrowsTypedErrors) {
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "cuInit"));
  try {
    check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(4096 bytes)");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("cuMemAlloc(4096 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << e.what();
  }
  try {
    check(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Driver);
    EXPECT_NE(std::string(e.what()).find("cuLaunchKernel failed"), std::string::npos) << e.what();
  }
}

// The toolkit's stub libcuda exports every entry point but fails cuInit:
// loading it proves each versioned name resolves against a real libcuda
// ABI, and that a failing cuInit is reported. The loader reads
// LD_LIBRARY_PATH only at start, so the check runs in a child process.
constexpr const char* StubDirectory = "/usr/local/cuda/lib64/stubs";

TEST(DriverApi, StubDriverResolvesAndFailsCuInit) {
  if (DriverApi::load())
    GTEST_SKIP() << "a real driver is installed; the stub would not be loaded";
  if (!llvm::sys::fs::exists(std::string(StubDirectory) + "/libcuda.so"))
    GTEST_SKIP() << "no CUDA stub library at " << StubDirectory;
  std::string output;
  int status = test::run_command(
      "env LD_LIBRARY_PATH=" + std::string(StubDirectory) +
          " GPUKIT_TEST_STUB_CHILD=1 GPUKIT_QUIET=1 '" + test::self_path() +
          "' --gtest_filter=DriverApiStubChild.*",
      output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

TEST(DriverApiStubChild, Run) {
  if (!std::getenv("GPUKIT_TEST_STUB_CHILD"))
    GTEST_SKIP() << "runs only inside DriverApi.StubDriverResolvesAndFailsCuInit";
  const DriverApi* api = DriverApi::load();
  ASSERT_NE(api, nullptr) << DriverApi::load_error();
#define GPUKIT_EXPECT_RESOLVED(name) EXPECT_NE(api->name, nullptr) << #name;
  GPUKIT_DRIVER_FUNCTIONS(GPUKIT_EXPECT_RESOLVED)
#undef GPUKIT_EXPECT_RESOLVED
  CUresult result = api->cuInit(0);
  EXPECT_NE(result, CUDA_SUCCESS);
  std::string text = describe(*api, result);
  EXPECT_FALSE(text.empty());
}

} // namespace
} // namespace gpukit::rt
