// Tuning on the GPU (skipped without one): every candidate a tuning run
// measures computed the default's answer; the winner is never slower than
// the default; the tuned configuration, run on its own over fresh random
// inputs into poisoned outputs, equals the default bit for bit for integer
// and bool outputs and within 2 ulps for floating point; GPUKIT_TUNE=on
// tunes on first use and a later lookup needs no timing. Speed and gain are
// printed, never asserted (bench/ reports speed).
#include "dsl/tune.hpp"

#include "codegen/passes/pipeline.hpp"
#include "dsl/gpukit.hpp"
#include "dsl/text/host_array.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "codegen/kernel_abi.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace gpukit {
namespace {

using ir::Op;

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    if (!rt::Runtime::get().on_gpu())                                                              \
      GTEST_SKIP() << "no GPU: " << rt::Runtime::get().fallback_reason();                          \
  } while (0)

std::string fresh_directory(const std::string& name) {
  std::string dir = std::string(GPUKIT_BINARY_DIR) + "/test-tmp/dsl/" + name + "-" +
                    std::to_string(getpid());
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

struct Case {
  std::string name;
  ir::Program program;
  uint64_t n;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  {
    ir::Program p;
    auto x = p.add_input("x", DType::Float32);
    auto y = p.add_input("y", DType::Float32);
    auto s = p.add_scalar("s0", DType::Float32, true);
    p.add_output("out", DType::Float32, p.add(Op::Add, {p.add(Op::Mul, {s, x}), p.add(Op::Sin, {y})}));
    p.label = "out = 2 * x + sin(y)";
    out.push_back({"saxpy_sin_f32", p, (uint64_t(1) << 24) + 3});
  }
  {
    ir::Program p;
    auto a = p.add_input("a", DType::Int32);
    auto b = p.add_input("b", DType::Int32);
    auto c = p.add_input("c", DType::Int64);
    p.add_output("q", DType::Int32, p.add(Op::Div, {a, b}));
    p.add_output("r", DType::Int64, p.add(Op::Add, {p.add(Op::Mod, {c, a}), p.add(Op::Max, {a, b})}));
    p.label = "q = a / b; r = c % a + max(a, b)";
    out.push_back({"divmod_i32_i64", p, (uint64_t(1) << 22) + 1});
  }
  {
    ir::Program p;
    auto h = p.add_input("h", DType::Float16);
    auto b = p.add_input("b", DType::BFloat16);
    p.add_output("o", DType::Float16, p.add(Op::Exp, {p.add(Op::Mul, {h, b})}));
    p.add_output("e", DType::BFloat16, p.add(Op::Sqrt, {h}));
    p.label = "o = exp(h * b); e = sqrt(h)";
    out.push_back({"half_types", p, (uint64_t(1) << 23) + 7});
  }
  {
    ir::Program p;
    auto u = p.add_input("u", DType::UInt8);
    auto v = p.add_input("v", DType::UInt8);
    auto m = p.add_input("m", DType::Bool);
    p.add_output("hit", DType::Bool, p.add(Op::And, {p.add(Op::Lt, {u, v}), m}));
    p.add_output("pick", DType::UInt8, p.add(Op::Select, {m, u, v}));
    p.label = "hit = u < v && m; pick = where(m, u, v)";
    out.push_back({"bytes_u8_bool", p, (uint64_t(1) << 24) + 5});
  }
  {
    ir::Program p;
    auto x = p.add_input("x", DType::Float64);
    p.add_output("out", DType::Float64, p.add(Op::Fma, {x, x, p.add(Op::Log, {x})}));
    p.label = "out = fma(x, x, log(x))";
    out.push_back({"fma_log_f64", p, uint64_t(1) << 20});
  }
  return out;
}

/// Runs `optimized` with `config` over `inputs` into outputs poisoned with
/// 0xFF bytes (NaN in every floating type), and returns the outputs.
std::vector<text::HostArray> run_config(const ir::Program& optimized,
                                        const codegen::ElementwiseConfig& config,
                                        const std::vector<text::HostArray>& inputs, uint64_t n) {
  rt::Runtime& runtime = rt::Runtime::get();
  codegen::CudaKernel k = codegen::emit_cuda(optimized, config.emit_options(codegen::needs_index64(n)));
  const rt::Kernel& kernel = runtime.kernels().get({k.name, k.source, k.nvrtc_options});
  std::vector<rt::Allocation> in, out;
  std::vector<uint64_t> slots;
  for (const text::HostArray& a : inputs) {
    in.push_back(runtime.allocator().allocate(a.data.size()));
    runtime.copy_to_device(in.back(), a.data.data(), a.data.size());
    slots.push_back(in.back().address);
  }
  std::vector<text::HostArray> results;
  for (const ir::Output& o : optimized.outputs()) {
    text::HostArray poison = text::HostArray::zeros(o.type, {static_cast<int64_t>(n)});
    std::memset(poison.data.data(), 0xFF, poison.data.size());
    out.push_back(runtime.allocator().allocate(poison.data.size()));
    runtime.copy_to_device(out.back(), poison.data.data(), poison.data.size());
    slots.push_back(out.back().address);
    results.push_back(std::move(poison));
  }
  for (const ir::ScalarParam& s : optimized.scalars()) {
    uint64_t bits = 0;
    codegen::write_scalar_argument(ir::Constant::of_float(DType::Float64, 2.0), s.type, &bits);
    slots.push_back(bits);
  }
  slots.push_back(n);
  std::vector<void*> args;
  for (uint64_t& s : slots)
    args.push_back(&s);
  unsigned grid = codegen::elementwise_grid(config, n, k.pack_width, target_limits(*runtime.device()));
  runtime.launch(kernel, {grid, config.shape.block_size, 0}, args.data());
  runtime.synchronize();
  for (size_t o = 0; o < results.size(); ++o)
    runtime.copy_to_host(results[o].data.data(), out[o], results[o].data.size());
  for (rt::Allocation a : in)
    runtime.allocator().deallocate(a);
  for (rt::Allocation a : out)
    runtime.allocator().deallocate(a);
  return results;
}

/// Mismatches of `got` against `want`: integers and bool bit for bit,
/// floating point within 2 ulps of the type (relative, absolute below 1);
/// NaN never passes.
size_t mismatches(const text::HostArray& got, const text::HostArray& want, std::string* first) {
  double ulp = 0;
  switch (want.dtype) {
  case DType::Float16: ulp = std::ldexp(1.0, -10); break;
  case DType::BFloat16: ulp = std::ldexp(1.0, -7); break;
  case DType::Float32: ulp = std::ldexp(1.0, -23); break;
  case DType::Float64: ulp = std::ldexp(1.0, -52); break;
  case DType::Bool:
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: break;
  }
  size_t bad = 0;
  unsigned bytes = size_of(want.dtype);
  for (size_t k = 0; k < want.elements(); ++k) {
    bool ok;
    if (!is_floating(want.dtype)) {
      ok = std::memcmp(got.data.data() + k * bytes, want.data.data() + k * bytes, bytes) == 0;
    } else {
      double g = got.get(k), w = want.get(k);
      ok = !std::isnan(g) && !std::isnan(w) && std::fabs(g - w) <= 2 * ulp * std::max(1.0, std::fabs(w));
    }
    if (!ok && bad++ == 0 && first)
      *first = fmt::format("element {}: {} vs {}", k, got.get(k), want.get(k));
  }
  return bad;
}

TEST(TuneGpu, WinnersComputeTheDefaultsAnswerAndAreNeverSlower) {
  SKIP_WITHOUT_GPU();
  std::string dir = fresh_directory("tune-gpu");
  rt::TuningDatabase db(dir + "/tuning.json");
  for (Case& c : cases()) {
    SCOPED_TRACE(c.name);
    TuneOptions options;
    options.database = &db;
    TuneReport r = tune_program(c.program, c.n, options);
    std::printf("%s\n", format_tune_table(r).c_str());
    std::printf("[%s] %.2fx over the default, %.2f s wall (%.2f s compiling %u kernels)\n\n",
                c.name.c_str(), r.speedup(), r.wall_s, r.compile_s, r.kernels_compiled);
    EXPECT_TRUE(r.stored) << r.database;
    for (const TuneCandidate& k : r.candidates)
      EXPECT_FALSE(k.problem.starts_with("wrong answer") || k.problem.starts_with("does not compile"))
          << k.description << ": " << k.problem;
    const TuneCandidate& w = r.winner();
    const TuneCandidate& d = r.default_candidate();
    ASSERT_TRUE(w.measured && d.measured);
    EXPECT_LE(w.median_ms, d.median_ms) << "the tuned kernel must never be slower";

    // The tuned configuration on its own, fresh inputs, poisoned outputs.
    ir::Program optimized = ir::optimize(c.program);
    std::vector<text::HostArray> inputs;
    for (size_t k = 0; k < optimized.inputs().size(); ++k) {
      DType t = optimized.inputs()[k].type;
      text::HostArray a = text::HostArray::zeros(t, {static_cast<int64_t>(c.n)});
      double lo = is_floating(t) ? 0.1 : t == DType::UInt8 ? 0 : t == DType::Bool ? 0 : -5000;
      double hi = is_floating(t) ? 3.0 : t == DType::UInt8 ? 256 : t == DType::Bool ? 1 : 5000;
      a.fill_random(1234 + 17 * k, lo, hi);
      inputs.push_back(std::move(a));
    }
    codegen::ElementwiseConfig tuned = *codegen::ElementwiseConfig::from_config(w.config);
    codegen::ElementwiseConfig heuristic = *codegen::ElementwiseConfig::from_config(d.config);
    std::vector<text::HostArray> got = run_config(optimized, tuned, inputs, c.n);
    std::vector<text::HostArray> want = run_config(optimized, heuristic, inputs, c.n);
    for (size_t o = 0; o < got.size(); ++o) {
      std::string first;
      EXPECT_EQ(mismatches(got[o], want[o], &first), 0u)
          << optimized.outputs()[o].name << " with " << w.description << ": " << first;
    }

    // A later process: the stored answer without timing.
    auto t0 = std::chrono::steady_clock::now();
    rt::TuningDatabase later(dir + "/tuning.json");
    TunedLaunch launch = tuned_launch(optimized, c.n, true, rt::TuneMode::Cached, later,
                                      rt::Runtime::get().device());
    double lookup_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[%s] reuse in a fresh database object: %.3f ms (%s)\n\n", c.name.c_str(),
                lookup_ms, launch.explain().c_str());
    EXPECT_EQ(launch.source, LaunchSource::TunedEntry) << launch.reason;
    EXPECT_EQ(launch.config, tuned);
  }
}

TEST(TuneGpu, TunesOnFirstUseWhenAskedThenReuses) {
  SKIP_WITHOUT_GPU();
  std::string dir = fresh_directory("tune-gpu-on");
  rt::TuningDatabase db(dir + "/tuning.json");
  Case c = cases()[0];
  ir::Program optimized = ir::optimize(c.program);
  const rt::DeviceInfo* device = rt::Runtime::get().device();
  TunedLaunch first = tuned_launch(optimized, 1 << 20, true, rt::TuneMode::On, db, device);
  EXPECT_EQ(first.source, LaunchSource::TunedNow) << first.reason;
  std::printf("first use: %s\n", first.explain().c_str());
  TunedLaunch second = tuned_launch(optimized, (1 << 20) + 100, true, rt::TuneMode::On, db, device);
  EXPECT_EQ(second.source, LaunchSource::TunedEntry) << second.reason;
  EXPECT_EQ(second.config, first.config);
}

TEST(TuneGpu, FromTheCppFrontEnd) {
  SKIP_WITHOUT_GPU();
  std::string dir = fresh_directory("tune-gpu-dsl");
  rt::TuningDatabase db(dir + "/tuning.json");
  auto x = Array<float>::random({1 << 22}, 1, 0.0, 1.0);
  auto y = Array<float>::random({1 << 22}, 2, 0.0, 1.0);
  Array<float> out(x.shape());
  TuneOptions options;
  options.database = &db;
  std::vector<TuneReport> reports = tune(out, 3.0f * x - cos(y), {1 << 16, 1 << 22}, options);
  ASSERT_EQ(reports.size(), 2u);
  for (const TuneReport& r : reports) {
    std::printf("%s\n", format_tune_table(r).c_str());
    EXPECT_TRUE(r.label.starts_with("out = 3 * in0 - cos(in1)  (dsl/tune_gpu_test.cpp:")) << r.label;
    EXPECT_TRUE(r.stored);
  }
  EXPECT_NE(reports[0].key.size_bucket, reports[1].key.size_bucket);
  EXPECT_EQ(db.records().size(), 2u);
}

} // namespace
} // namespace gpukit
