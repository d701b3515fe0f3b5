#include "runtime/nvrtc_compiler.hpp"

#include "runtime/nvrtc_api.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cstring>

namespace gpukit::rt {
namespace {

constexpr const char* Saxpy = R"(extern "C" __global__ void saxpy(float a, const float* __restrict__ x,
                                 float* __restrict__ y, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}
)";

class NvrtcCompilerTest : public ::testing::Test {
protected:
  void SetUp() override {
    Api = NvrtcApi::load();
    if (!Api)
      GTEST_SKIP() << NvrtcApi::load_error();
  }
  const NvrtcApi* Api = nullptr;
};

bool is_elf(const std::vector<char>& image) {
  return image.size() > 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
}

TEST_F(NvrtcCompilerTest, ApiKnowsItsVersionAndPath) {
  EXPECT_GE(Api->major, 11);
  EXPECT_FALSE(Api->path.empty());
  EXPECT_TRUE(NvrtcApi::load_error().empty());
}

TEST_F(NvrtcCompilerTest, CompilesCubinForSm80AndSm90) {
  NvrtcCompiler compiler(*Api);
  for (const char* arch : {"sm_80", "sm_90"}) {
    CompileResult result = compiler.compile("saxpy", Saxpy, arch);
    EXPECT_TRUE(is_elf(result.cubin)) << arch;
    EXPECT_GT(result.milliseconds, 0) << arch;
  }
}

TEST_F(NvrtcCompilerTest, OptionsAreAccurateMathByDefault) {
  std::vector<std::string> options = NvrtcCompiler::cubin_options("sm_90", {"-lineinfo"});
  EXPECT_EQ(options.front(), "--gpu-architecture=sm_90");
  EXPECT_NE(std::find(options.begin(), options.end(), "-std=c++17"), options.end());
  EXPECT_NE(std::find(options.begin(), options.end(), "-default-device"), options.end());
  EXPECT_EQ(std::find(options.begin(), options.end(), "--use_fast_math"), options.end());
  EXPECT_EQ(options.back(), "-lineinfo");
  EXPECT_EQ(NvrtcCompiler::ptx_options("sm_80").front(), "--gpu-architecture=compute_80");
}

TEST_F(NvrtcCompilerTest, MalformedArchIsAUsageError) {
  NvrtcCompiler compiler(*Api);
  try {
    compiler.compile("saxpy", Saxpy, "90");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << e.what();
  }
}

TEST_F(NvrtcCompilerTest, SyntaxErrorShowsLogAndNumberedSource) {
  NvrtcCompiler compiler(*Api);
  const char* broken = "extern \"C\" __global__ void broken(float* y) {\n"
                       "  unsigned i = threadIdx.x;\n"
                       "  y[i] = undefined_name + 1.0f;\n"
                       "}\n";
  try {
    compiler.compile("broken", broken, "sm_90");
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Compile);
    EXPECT_NE(what.find("could not compile kernel 'broken' for sm_90"), std::string::npos) << what;
    // NVRTC's own words, and where it points.
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;
    EXPECT_NE(what.find("broken.cu(3): error"), std::string::npos) << what;
    // The source, numbered, with the blamed line marked.
    EXPECT_NE(what.find("   1 | extern \"C\" __global__ void broken(float* y) {"), std::string::npos) << what;
    EXPECT_NE(what.find("   2 |   unsigned i = threadIdx.x;"), std::string::npos) << what;
    EXPECT_NE(what.find(">  3 |   y[i] = undefined_name + 1.0f;"), std::string::npos) << what;
  }
}

TEST_F(NvrtcCompilerTest, PtxTargetsTheVirtualArch) {
  NvrtcCompiler compiler(*Api);
  std::string ptx = compiler.ptx("saxpy", Saxpy, "sm_90");
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry saxpy"), std::string::npos);
  EXPECT_EQ(ptx.find('\0'), std::string::npos);
}

TEST_F(NvrtcCompilerTest, SupportedArchsIncludeOurs) {
  std::vector<std::string> archs = NvrtcCompiler(*Api).supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_80"), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_90"), archs.end());
}

TEST(NumberSourceLines, AlignsAndMarks) {
  EXPECT_EQ(number_source_lines("a\nb\n", {2}), "   1 | a\n>  2 | b");
  EXPECT_EQ(number_source_lines(""), "");
}

// Every golden kernel the code generator's tests pin must also be CUDA that
// NVRTC accepts, for every architecture we ship.
TEST_F(NvrtcCompilerTest, GoldenKernelsCompile) {
  std::string golden = std::string(GPUKIT_SOURCE_DIR) + "/tests/golden";
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(golden, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(".cu"))
      files.push_back(it->path());
  std::sort(files.begin(), files.end()); // deterministic order of failures
  if (files.empty())
    GTEST_SKIP() << "no tests/golden/*.cu files yet";
  NvrtcCompiler compiler(*Api);
  std::vector<std::string> include = {std::string("--include-path=") + GPUKIT_SOURCE_DIR};
  for (const std::string& file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    ASSERT_TRUE(buffer) << file;
    std::string name = llvm::sys::path::stem(file).str();
    for (const char* arch : {"sm_80", "sm_90"}) {
      try {
        CompileResult result = compiler.compile(name, (*buffer)->getBuffer(), arch, include);
        EXPECT_TRUE(is_elf(result.cubin)) << file << " " << arch;
      } catch (const Error& e) {
        ADD_FAILURE() << file << ":\n" << e.what();
      }
    }
  }
}

} // namespace
} // namespace gpukit::rt
