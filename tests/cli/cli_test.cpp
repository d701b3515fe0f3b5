// End-to-end tests of the gpukit tool: the built binary is run as a user
// runs it (on this machine: the CPU fallback) and its exit code, stdout and
// stderr are checked.
#include "../codegen/kernel_sources.hpp"
#include "dsl/gpukit.hpp"
#include "dsl/text/npy.hpp"
#include "tools/black_scholes.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Program.h>

#include <cmath>

namespace gpukit {
namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

/// One directory per test process: ctest runs the tests in parallel.
std::string scratch_dir() {
  std::string dir = fmt::format("{}/tests/cli-scratch/{}", GPUKIT_BINARY_DIR,
                                llvm::sys::Process::getProcessId());
  llvm::sys::fs::create_directories(dir);
  return dir;
}

std::string read_file(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

void write_file(const std::string& path, std::string_view text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << text;
}

/// Runs `gpukit args...` with stdout and stderr captured.
Result gpukit(std::vector<std::string> args) {
  std::string binary = std::string(GPUKIT_BINARY_DIR) + "/tools/gpukit";
  std::string out = scratch_dir() + "/stdout.txt", err = scratch_dir() + "/stderr.txt";
  // The redirections do not truncate: start from no files.
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(err);
  std::vector<llvm::StringRef> argv{binary};
  for (const std::string& a : args)
    argv.push_back(a);
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, llvm::StringRef(out), llvm::StringRef(err)};
  std::string message;
  Result r;
  r.rc = llvm::sys::ExecuteAndWait(binary, argv, llvm::None, redirects, /*SecondsToWait=*/300, 0, &message);
  EXPECT_GE(r.rc, 0) << message;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string example(std::string_view name) {
  return fmt::format("{}/examples/{}", GPUKIT_SOURCE_DIR, name);
}

TEST(Cli, DumpPrintsTheDslsCudaWithoutAGpu) {
  Result r = gpukit({"dump", "-e", "out = 2*x + sin(y)"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto x = Array<float>::random({16}, 1).named("x");
  auto y = Array<float>::random({16}, 2).named("y");
  Array<float> out(x.shape());
  out.named("out");
  std::string cpp = source_of(out, 2 * x + sin(y));
  auto body = [](const std::string& s) { return s.substr(s.find('\n') + 1); };
  EXPECT_EQ(body(r.out), body(cpp));
  EXPECT_TRUE(r.out.starts_with("// gpukit kernel ew_")) << r.out;
}

TEST(Cli, DumpShowsIrAndAcceptsEveryExample) {
  Result r = gpukit({"dump", "--ir", example("saxpy.gk")});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("kernel(x: f32[], y: f32[]; a: f32) -> (out: f32[])"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("__global__"), std::string::npos);
  for (const char* name : {"saxpy.gk", "black_scholes.gk", "gelu.gk", "softmax.gk", "layernorm.gk"}) {
    Result d = gpukit({"dump", example(name)});
    EXPECT_EQ(d.rc, 0) << name << ": " << d.err;
  }
}

TEST(Cli, ParseErrorsExitWithOne) {
  Result r = gpukit({"dump", "-e", "out = 2*x +"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "-e:1:12: error: expected an expression, found end of input\n"
                   "  out = 2*x +\n"
                   "             ^\n");
  EXPECT_EQ(r.out, "");
  r = gpukit({"run", "-e", "out = sinn(x)", "--size", "N=4"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("unknown function 'sinn'; did you mean 'sin'?"), std::string::npos) << r.err;
}

TEST(Cli, ArgumentErrorsExitWithOne) {
  EXPECT_EQ(gpukit({}).rc, 1);
  EXPECT_EQ(gpukit({"frobnicate"}).rc, 1);
  Result r = gpukit({"run", "-e", "out = x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: size N is not bound; give --size N=..."), std::string::npos) << r.err;
  r = gpukit({"run", "-e", "out = x", "--size", "M=3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: --size M=3: the program has no size named 'M' (its sizes: N)"),
            std::string::npos)
      << r.err;
  r = gpukit({"run", "-e", "out = x", "--size", "N=three"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("'three' is not a non-negative integer"), std::string::npos) << r.err;
  r = gpukit({"dump", scratch_dir() + "/missing.gk"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;
  r = gpukit({"run", "-e", "out = x", "--size", "N=3", "--save", "result=o.npy"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("the program has no output named 'result' (its outputs: out)"), std::string::npos)
      << r.err;
  r = gpukit({"cache", "shred"});
  EXPECT_EQ(r.rc, 1);
}

TEST(Cli, MalformedNpyIsRejected) {
  std::string bad = scratch_dir() + "/bad.npy";
  write_file(bad, "this is not numpy");
  Result r = gpukit({"run", "-e", "out = x * 2", "--input", "x=" + bad});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not a usable .npy file: it does not start with the .npy magic string"),
            std::string::npos)
      << r.err;
}

TEST(Cli, RunReadsAndWritesNpy) {
  text::HostArray x = text::HostArray::zeros(DType::Float64, {5});
  for (size_t k = 0; k < 5; ++k)
    x.set(k, static_cast<double>(k) - 2);
  std::string in = scratch_dir() + "/x.npy", out = scratch_dir() + "/out.npy";
  text::write_npy(in, x);
  llvm::sys::fs::remove(out);
  Result r = gpukit({"run", "-e", "out = x * x + 1", "--input", "x=" + in, "--save", "out=" + out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "out: f64[5]  min 1  max 5  mean 3  [5, 2, 1, 2, 5]\n");
  text::HostArray o = text::read_npy(out);
  ASSERT_EQ(o.dtype, DType::Float64);
  EXPECT_EQ(o.get(0), 5.0);
  EXPECT_EQ(o.get(4), 5.0);
}

TEST(Cli, BlackScholesMatchesTheCppDsl) {
  std::string call_path = scratch_dir() + "/call.npy", put_path = scratch_dir() + "/put.npy";
  Result r = gpukit({"run", example("black_scholes.gk"), "--size", "N=1000000", "--save",
                     "call=" + call_path, "--save", "put=" + put_path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("call: f32[1000000]"), std::string::npos) << r.out;
  text::HostArray call = text::read_npy(call_path), put = text::read_npy(put_path);
  ASSERT_EQ(call.elements(), 1000000u);

  cli::BlackScholes bs(1000000, /*seed=*/1);
  bs.price();
  std::vector<float> c = bs.call().to_host(), p = bs.put().to_host();
  // Same inputs, same formula; the two programs differ only in where
  // r + 0.5 v^2 is computed (host vs kernel), so a few float32 ulps apart.
  double worst = 0;
  for (size_t k = 0; k < c.size(); ++k)
    worst = std::max({worst, std::abs(call.get(k) - c[k]) / (1.0 + std::abs(c[k])),
                      std::abs(put.get(k) - p[k]) / (1.0 + std::abs(p[k]))});
  EXPECT_LT(worst, 1e-5);
}

TEST(Cli, DumpFlagVerboseAndOtherSubcommands) {
  Result r = gpukit({"run", "--dump", "--verbose", example("saxpy.gk"), "--size", "N=100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("// gpukit kernel ew_")) << r.out;
  EXPECT_NE(r.out.find("out: f32[100]"), std::string::npos);
  EXPECT_NE(r.err.find("backend: "), std::string::npos) << r.err;

  r = gpukit({"bench", example("saxpy.gk"), "--size", "N=4096", "--reps", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("% of copy bandwidth"), std::string::npos) << r.out;

  r = gpukit({"info", "--dump"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("NVRTC"), std::string::npos) << r.out;

  for (const char* action : {"stats", "list", "clear"}) {
    r = gpukit({"cache", action, "--dump"});
    EXPECT_EQ(r.rc, 0) << action << ": " << r.err;
  }
}

TEST(Cli, RunAndBenchExplainTheLaunch) {
  Result r = gpukit({"run", "--explain", example("saxpy.gk"), "--size", "N=100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("kernel ew_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("heuristic"), std::string::npos) << r.out; // no GPU: never tuned
  EXPECT_NE(r.out.find("out: f32[100]"), std::string::npos) << r.out;

  r = gpukit({"bench", "--explain", example("saxpy.gk"), "--size", "N=4096", "--reps", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("heuristic"), std::string::npos) << r.out;
}

// Tuning measures on the GPU; on the CPU fallback it says why it cannot.
TEST(Cli, TuneWithoutAGpuExitsWithTwo) {
  if (rt::Runtime::get().on_gpu())
    GTEST_SKIP() << "a GPU is present: tune would run (tests/dsl/tune_gpu_test.cpp covers it)";
  Result r = gpukit({"tune", "-e", "out = 2*x + sin(y)", "--size", "N=4096"});
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("error: tuning needs a GPU: "), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");

  r = gpukit({"tune", example("saxpy.gk")}); // N unbound: the user's mistake comes first
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
}


TEST(Cli, DumpOfReductionsIsTheDslsCuda) {
  Result r = gpukit({"dump", example("softmax.gk"), "--size", "R=64", "--size", "C=100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("reduction plan: row (last axis) reduction of [64, 100]")) << r.out;
  auto x = Array<float>::random({64, 100}, 1).named("x");
  Array<float> out(x.shape());
  out.named("out");
  std::vector<std::string> cpp =
      test::reduction_kernel_bodies(inspect(out, exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1)).source);
  ASSERT_EQ(cpp.size(), 1u);
  EXPECT_EQ(test::reduction_kernel_bodies(r.out), cpp);

  r = gpukit({"dump", "-e", "x: f32[N]\ny: f32[N]\nout = sum(x * y)", "--size", "N=1000"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto a = Array<float>::random({1000}, 1).named("x");
  auto b = Array<float>::random({1000}, 2).named("y");
  Array<float> total(Shape(1));
  total.named("out");
  cpp = test::reduction_kernel_bodies(inspect(total, sum(a * b)).source);
  ASSERT_EQ(cpp.size(), 2u);
  EXPECT_EQ(test::reduction_kernel_bodies(r.out), cpp);

  r = gpukit({"dump", "-e", "x: f32[R, C]\nout = mean(x, 0)", "--size", "R=64", "--size", "C=100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  Array<float> means(Shape(100));
  means.named("out");
  cpp = test::reduction_kernel_bodies(inspect(means, mean(x, 0)).source);
  ASSERT_EQ(cpp.size(), 1u); // one kernel for a one-stage column reduction
  EXPECT_EQ(test::reduction_kernel_bodies(r.out), cpp);

  // Unbound, the row length is assumed for the dump, and said so.
  r = gpukit({"dump", example("softmax.gk")});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("note: `out = exp(x - max(x, axis=1)) / sum(exp(x - max(x, axis=1)), axis=1)` "
                       "(" + example("softmax.gk") + ":6): size C is not bound; the row kernel is shown for C = 1024"),
            std::string::npos)
      << r.err;
}

TEST(Cli, RunAndBenchProgramsWithReductions) {
  Result r = gpukit({"run", example("softmax.gk"), "--size", "R=64", "--size", "C=100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("out: f32[64, 100]  min ")) << r.out;
  EXPECT_NE(r.out.find("mean 0.01 "), std::string::npos) << r.out; // each row sums to 1

  r = gpukit({"run", "--verbose", example("layernorm.gk"), "--size", "R=8", "--size", "C=64"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("out: f32[8, 64]  min ")) << r.out;
  EXPECT_NE(r.err.find("rd_"), std::string::npos) << r.err;

  // Outputs in statement order, a 0-d one saved as shape ().
  std::string path = scratch_dir() + "/n.npy";
  llvm::sys::fs::remove(path);
  text::HostArray x = text::HostArray::zeros(DType::Float64, {4});
  for (size_t k = 0; k < 4; ++k)
    x.set(k, static_cast<double>(k));
  std::string in = scratch_dir() + "/x4.npy";
  text::write_npy(in, x);
  r = gpukit({"run", "-e", "y = x + 1; n = sqrt(sum(x * x)); m = max(x)", "--input", "x=" + in, "--save",
              "n=" + path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "y: f64[4]  min 1  max 4  mean 2.5  [1, 2, 3, 4]\n"
                   "n: f64[]  min 3.74166  max 3.74166  mean 3.74166  [3.74166]\n"
                   "m: f64[]  min 3  max 3  mean 3  [3]\n");
  EXPECT_NE(read_file(path).find("'shape': ()"), std::string::npos);
  EXPECT_NEAR(text::read_npy(path).get(0), std::sqrt(14.0), 1e-12);

  r = gpukit({"bench", example("softmax.gk"), "--size", "R=64", "--size", "C=100", "--reps", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("% of copy bandwidth"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 statement with reductions)"), std::string::npos) << r.out;
}

TEST(Cli, ReductionErrorsExitWithOne) {
  Result r = gpukit({"run", "-e", "x: f32[R, C]\nout = sum(x, axis=2)", "--size", "R=4", "--size", "C=3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "-e:2:19: error: axis 2 is out of range: 'x' is f32[R, C] = [4, 3], which has 2 "
                   "dimensions (axes -2..1)\n"
                   "  out = sum(x, axis=2)\n"
                   "                    ^\n");
  EXPECT_EQ(r.out, "");
  // Tuning has nothing to measure in reduction kernels: the user's error first.
  r = gpukit({"tune", example("softmax.gk"), "--size", "R=64", "--size", "C=100"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("error: tune measures elementwise kernels, and every statement of this program reduces"),
            std::string::npos)
      << r.err;
}

TEST(Cli, Demo) {
  Result r = gpukit({"demo", "--dump"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("// gpukit kernel ew_")) << r.out;
  EXPECT_NE(r.out.find("Black-Scholes: 1048576 options priced on "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OK\n"), std::string::npos) << r.out;
}

} // namespace
} // namespace gpukit
