// inspect() / source_of(): the generated kernel without running it, and
// GPUKIT_DUMP.
#include "dsl/gpukit.hpp"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdlib>

namespace gpukit {
namespace {

TEST(Inspect, ShowsLabelIrAndSource) {
  auto x = Array<float>::arange({1024}).named("x");
  auto y = Array<float>::arange({1024}).named("y");
  Array<float> out(x.shape());
  out.named("out");
  uint64_t runs = expression_stats().cpu_runs + expression_stats().gpu_launches;
  // An expression type no other test uses: a kernel's label names the
  // assignment that built it first.
  KernelInfo k = inspect(out, 2.0f * x + sin(y) * 1.0f); int line = __LINE__;
  EXPECT_EQ(expression_stats().cpu_runs + expression_stats().gpu_launches, runs); // not run
  EXPECT_EQ(k.label, "out = 2 * x + sin(y) * 1  (dsl/inspect_test.cpp:" + std::to_string(line) + ")");
  EXPECT_TRUE(k.name.starts_with("ew_")) << k.name;
  EXPECT_NE(k.source.find("extern \"C\" __global__"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find(k.label), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("const float* __restrict__ x"), std::string::npos) << k.source;
  EXPECT_NE(k.ir.find("sin"), std::string::npos) << k.ir;
  EXPECT_EQ(k.pack_width, 4u);
  // The kernel inspect() built is the one the assignment runs: no new build.
  uint64_t builds = expression_stats().ir_builds;
  EXPECT_EQ(source_of(out, 2.0f * x + sin(y) * 1.0f), k.source);
  EXPECT_EQ(expression_stats().ir_builds, builds);
}

TEST(Inspect, UnnamedArraysArePositional) {
  auto x = Array<float>::arange({16});
  auto y = Array<float>::arange({16});
  Array<float> out(16);
  KernelInfo k = inspect(out, x * (y - x) / -y);
  EXPECT_TRUE(k.label.starts_with("out = in0 * (in1 - in0) / -in1  (")) << k.label;
}

TEST(Inspect, MultipleOutputs) {
  auto x = Array<double>::arange({16}).named("x");
  Array<double> a(16), b(16);
  a.named("a");
  b.named("b");
  KernelInfo k = inspect(a, x + 1.0, b, exp(x));
  EXPECT_TRUE(k.label.starts_with("a = x + 1; b = exp(x)  (")) << k.label;
}

TEST(Inspect, PrintsParenthesesOnlyWhereNeeded) {
  auto a = Array<int32_t>::arange({4}).named("a");
  auto b = Array<int32_t>::arange({4}).named("b");
  Array<int32_t> o(4);
  o.named("o");
  EXPECT_TRUE(inspect(o, a - (b - a)).label.starts_with("o = a - (b - a)  ("));
  EXPECT_TRUE(inspect(o, (a - b) - a).label.starts_with("o = a - b - a  ("));
  EXPECT_TRUE(inspect(o, -(a + b) * 2).label.starts_with("o = -(a + b) * 2  ("));
  EXPECT_TRUE(inspect(o, where(a < b && !(a == 1), min(a, 3), cast<int32_t>(b * 0.5f)))
                  .label.starts_with("o = where(a < b && !(a == 1), min(a, 3), cast<int32_t>(b * 0.5))"));
  EXPECT_TRUE(inspect(o, a * -3).label.starts_with("o = a * -3  ("));
}

TEST(Inspect, GeneratedSourceCompilesWithNvrtc) {
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.nvrtc())
    GTEST_SKIP() << "NVRTC is not available";
  auto x = Array<half>::arange({100}).named("x");
  auto y = Array<bfloat16>::arange({100}).named("y");
  Array<float> out(100);
  KernelInfo k = inspect(out, sqrt(x) * y + where(x > y, 1.5f, erf(x)));
  const rt::Kernel& compiled = runtime.kernels().get({k.name, k.source});
  EXPECT_FALSE(compiled.cubin.empty());
}

TEST(Inspect, DumpWritesOneFilePerKernel) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gpukit-dump", dir));
  ::setenv("GPUKIT_DUMP", dir.c_str(), 1);
  auto x = Array<int64_t>::arange({10});
  Array<int64_t> out(10);
  KernelInfo k = inspect(out, x * x * x + 17); // a type no other test uses: built here
  ::unsetenv("GPUKIT_DUMP");
  auto file = llvm::MemoryBuffer::getFile(std::string(dir) + "/" + k.name + ".cu");
  ASSERT_TRUE(static_cast<bool>(file)) << dir.c_str();
  EXPECT_EQ((*file)->getBuffer().str(), k.source);
  llvm::sys::fs::remove_directories(dir);
}

TEST(Inspect, DumpWritesAReductionsPlanBesideItsKernels) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gpukit-dump", dir));
  ::setenv("GPUKIT_DUMP", dir.c_str(), 1);
  auto x = Array<double>::random({6, 10}, 3).named("x");
  Array<double> out(Shape({6}));
  KernelInfo k = inspect(out, sqrt(sum(x * x * x, 1)) + 2.0); // a type no other test uses
  ::unsetenv("GPUKIT_DUMP");
  std::string first = k.name.substr(0, k.name.find(' '));
  auto plan = llvm::MemoryBuffer::getFile(std::string(dir) + "/" + first + ".plan");
  ASSERT_TRUE(static_cast<bool>(plan)) << dir.c_str();
  EXPECT_NE((*plan)->getBuffer().str().find("// reduction plan: row (last axis) reduction of [6, 10]"), std::string::npos)
      << (*plan)->getBuffer().str();
  EXPECT_NE((*plan)->getBuffer().str().find("epilogue (once per result)"), std::string::npos);
  EXPECT_TRUE(llvm::sys::fs::exists(std::string(dir) + "/" + first + ".cu"));
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
} // namespace gpukit
