// Tuning on the CPU: without a GPU tune() says why and the heuristic stays;
// the tuned_launch() decisions (stored entry, other bucket or device, stale
// entry, GPUKIT_TUNE=off) with a stand-in device; the heuristic grid equals
// the launcher's; the C++ front end keys an assignment as the expression
// engine builds it; every kernel a tuning run compiles is accepted by NVRTC.
#include "dsl/tune.hpp"

#include "codegen/ir_printer.hpp"
#include "codegen/passes/pipeline.hpp"
#include "dsl/gpukit.hpp"
#include "dsl/tune_bench.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

#include <unistd.h>

namespace gpukit {
namespace {

rt::DeviceInfo h100() {
  rt::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_major = 9;
  d.sm_minor = 0;
  d.sm_count = 132;
  d.total_memory = 80ull << 30;
  d.l2_bytes = 50ull << 20;
  d.max_threads_per_sm = 2048;
  d.driver_version = 13000;
  return d;
}

ir::Program saxpy() {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto y = p.add_input("y", DType::Float32);
  auto s = p.add_scalar("s0", DType::Float32, true);
  p.add_output("out", DType::Float32,
               p.add(ir::Op::Add, {p.add(ir::Op::Mul, {s, x}), p.add(ir::Op::Sin, {y})}));
  p.label = "out = 2 * x + sin(y)";
  return ir::optimize(p);
}

std::string fresh_directory(const std::string& name) {
  std::string dir = std::string(GPUKIT_BINARY_DIR) + "/test-tmp/dsl/" + name + "-" +
                    std::to_string(getpid());
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

rt::TuningRecord record_for(const rt::TuningKey& key, codegen::TuningConfig config) {
  rt::TuningRecord r;
  r.key = key;
  r.config = config.to_map();
  r.n = 1 << 24;
  r.best_ms = 0.05;
  r.default_ms = 0.06;
  r.candidates = 40;
  r.tuned_at = 1763800000;
  return r;
}

TEST(Tune, WithoutAGpuSaysWhyAndKeepsTheHeuristic) {
  rt::Runtime& runtime = rt::Runtime::get();
  if (runtime.on_gpu())
    GTEST_SKIP() << "a GPU is present: tests/dsl/tune_gpu_test.cpp tunes on it";
  try {
    tune_program(saxpy(), 1 << 20);
    FAIL() << "tuning without a GPU must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unavailable);
    std::string what = e.what();
    EXPECT_TRUE(what.starts_with("tuning needs a GPU: ")) << what;
    EXPECT_NE(what.find(std::string(runtime.fallback_reason())), std::string::npos) << what;
    EXPECT_NE(what.find("heuristic"), std::string::npos) << what;
  }
  TunedLaunch t = tuned_launch(saxpy(), 1 << 20, true);
  EXPECT_EQ(t.source, LaunchSource::Heuristic);
  EXPECT_EQ(t.config, codegen::heuristic_elementwise_config(
                          codegen::describe_elementwise(saxpy(), 1 << 20, true)));
  EXPECT_NE(t.explain().find("heuristic"), std::string::npos) << t.explain();

  // The C++ front end too.
  auto x = Array<float>::arange({1000});
  auto y = Array<float>::arange({1000});
  Array<float> out(1000);
  EXPECT_THROW(tune(out, 2.0f * x + sin(y)), Error);
}

TEST(TunedLaunch, UsesAMatchingEntryOnly) {
  std::string dir = fresh_directory("tuned-launch");
  rt::TuningDatabase db(dir + "/tuning.json");
  rt::DeviceInfo device = h100();
  ir::Program p = saxpy();
  uint64_t n = (1 << 24) + 12345;

  // Nothing stored: the heuristic, saying how to get an entry.
  TunedLaunch none = tuned_launch(p, n, true, rt::TuneMode::Cached, db, &device);
  EXPECT_EQ(none.source, LaunchSource::Heuristic);
  EXPECT_NE(none.reason.find("no tuned entry"), std::string::npos) << none.reason;
  EXPECT_NE(none.reason.find("2^24"), std::string::npos) << none.reason;

  codegen::ElementwiseProblem problem = codegen::describe_elementwise(p, n, true);
  codegen::ElementwiseConfig tuned;
  tuned.shape = {512, 2};
  tuned.vectorize = true;
  tuned.grid = codegen::GridPolicy::SmMultiple;
  tuned.grid_multiple = 8;
  rt::TuningKey key = elementwise_tuning_key(p, n, true, device);
  EXPECT_EQ(key.size_bucket, 24u);
  EXPECT_EQ(key.dtype, "f32");
  EXPECT_EQ(key.arch, "sm_90");
  EXPECT_EQ(key.space, "elementwise/1");
  EXPECT_TRUE(key.kernel.starts_with("ew/")) << key.kernel;
  ASSERT_TRUE(db.store(record_for(key, tuned.to_config(problem))));

  // A later process: the stored answer, no timing.
  rt::TuningDatabase later(dir + "/tuning.json");
  TunedLaunch hit = tuned_launch(p, n, true, rt::TuneMode::Cached, later, &device);
  EXPECT_EQ(hit.source, LaunchSource::TunedEntry);
  EXPECT_EQ(hit.config, tuned);
  EXPECT_NE(hit.reason.find("1.20x"), std::string::npos) << hit.reason;
  EXPECT_EQ(hit.grid(n, 4), 8u * 132);
  codegen::EmitOptions o = hit.emit_options(false);
  EXPECT_EQ(o.shape.block_size, 512u);
  EXPECT_EQ(o.shape.items_per_thread, 2u);
  EXPECT_TRUE(o.vectorize);
  EXPECT_NE(hit.explain().find("tuned entry"), std::string::npos) << hit.explain();
  // Any size in the bucket.
  EXPECT_EQ(tuned_launch(p, 1 << 24, true, rt::TuneMode::Cached, later, &device).source,
            LaunchSource::TunedEntry);

  // Another bucket, device, driver, alignment or mode: the heuristic.
  EXPECT_EQ(tuned_launch(p, 1 << 25, true, rt::TuneMode::Cached, later, &device).source,
            LaunchSource::Heuristic);
  rt::DeviceInfo a100 = device;
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.sm_major = 8;
  EXPECT_EQ(tuned_launch(p, n, true, rt::TuneMode::Cached, later, &a100).source,
            LaunchSource::Heuristic);
  rt::DeviceInfo new_driver = device;
  new_driver.driver_version = 13010;
  EXPECT_EQ(tuned_launch(p, n, true, rt::TuneMode::Cached, later, &new_driver).source,
            LaunchSource::Heuristic);
  EXPECT_EQ(tuned_launch(p, n, false, rt::TuneMode::Cached, later, &device).source,
            LaunchSource::Heuristic);
  TunedLaunch off = tuned_launch(p, n, true, rt::TuneMode::Off, later, &device);
  EXPECT_EQ(off.source, LaunchSource::Heuristic);
  EXPECT_EQ(off.reason, "GPUKIT_TUNE=off");
  TunedLaunch no_gpu = tuned_launch(p, n, true, rt::TuneMode::Cached, later, nullptr, "CUDA driver not detected");
  EXPECT_EQ(no_gpu.source, LaunchSource::Heuristic);
  EXPECT_NE(no_gpu.reason.find("CUDA driver not detected"), std::string::npos) << no_gpu.reason;
}

TEST(TunedLaunch, StaleEntriesAreNotMisread) {
  std::string dir = fresh_directory("tuned-launch-stale");
  rt::TuningDatabase db(dir + "/tuning.json");
  rt::DeviceInfo device = h100();
  ir::Program p = saxpy();
  uint64_t n = 1 << 20;
  rt::TuningKey key = elementwise_tuning_key(p, n, true, device);
  // A block size the space does not have, and an unknown dimension.
  ASSERT_TRUE(db.store(record_for(key, {{"block", 384}, {"ipt", 1}, {"vec", 4}, {"grid", -4}})));
  TunedLaunch odd = tuned_launch(p, n, true, rt::TuneMode::Cached, db, &device);
  EXPECT_EQ(odd.source, LaunchSource::Heuristic);
  EXPECT_NE(odd.reason.find("not a point of space elementwise/1"), std::string::npos) << odd.reason;
  ASSERT_TRUE(db.store(record_for(key, {{"block", 256}, {"ipt", 1}, {"vec", 4}, {"grid", -4}, {"swizzle", 2}})));
  EXPECT_EQ(tuned_launch(p, n, true, rt::TuneMode::Cached, db, &device).source, LaunchSource::Heuristic);
}

TEST(TunedLaunch, TuningOnFirstUseFallsBackWithoutAGpu) {
  if (rt::Runtime::get().on_gpu())
    GTEST_SKIP() << "a GPU is present: GPUKIT_TUNE=on would really tune";
  std::string dir = fresh_directory("tuned-launch-on");
  rt::TuningDatabase db(dir + "/tuning.json");
  rt::DeviceInfo device = h100();
  TunedLaunch t = tuned_launch(saxpy(), 1 << 20, true, rt::TuneMode::On, db, &device);
  EXPECT_EQ(t.source, LaunchSource::Heuristic);
  EXPECT_NE(t.reason.find("tuning failed: tuning needs a GPU"), std::string::npos) << t.reason;
}

TEST(TuneFrontEnd, KeysAnAssignmentAsTheEngineBuildsIt) {
  // Unnamed arrays: the engine names them in0, in1 and out, as the tuner does,
  // so the optimised programs print alike.
  auto x = Array<float>::arange({256});
  auto y = Array<float>::arange({256});
  Array<float> out(256);
  auto expr = 2.0f * x + sin(y);
  auto node = detail::target_node(expr);
  ir::Program mine = ir::optimize(detail::with_operands(
      std::source_location::current(),
      [](detail::KernelVariants& v, const detail::AssignmentCall& c) {
        return detail::assignment_program(v.type(), c);
      },
      detail::Target<float, decltype(node)>{&out, &node}));
  EXPECT_TRUE(mine.label.starts_with("out = 2 * in0 + sin(in1)  (dsl/tune_test.cpp:")) << mine.label;

  // Named arrays and a hand-built program: one key.
  auto a = Array<float>::arange({256}).named("alpha");
  auto b = Array<float>::arange({256}).named("beta");
  Array<float> result(256);
  result.named("result");
  auto named = 2.0f * a + sin(b);
  auto named_node = detail::target_node(named);
  ir::Program theirs = ir::optimize(detail::with_operands(
      std::source_location::current(),
      [](detail::KernelVariants& v, const detail::AssignmentCall& c) {
        return detail::assignment_program(v.type(), c);
      },
      detail::Target<float, decltype(named_node)>{&result, &named_node}));
  EXPECT_TRUE(theirs.label.starts_with("result = 2 * alpha + sin(beta)  (")) << theirs.label;
  rt::DeviceInfo device = h100();
  EXPECT_EQ(elementwise_tuning_key(mine, 1 << 20, true, device),
            elementwise_tuning_key(theirs, 1 << 20, true, device));
  EXPECT_EQ(elementwise_tuning_key(mine, 1 << 20, true, device),
            elementwise_tuning_key(saxpy(), 1 << 20, true, device));

  // x + x reads one input, as in the engine.
  auto twice = x + x;
  auto twice_node = detail::target_node(twice);
  ir::Program doubled = detail::with_operands(
      std::source_location::current(),
      [](detail::KernelVariants& v, const detail::AssignmentCall& c) {
        return detail::assignment_program(v.type(), c);
      },
      detail::Target<float, decltype(twice_node)>{&out, &twice_node});
  EXPECT_EQ(doubled.inputs().size(), 1u);
}

TEST(TuneTable, MarksWinnerAndDefault) {
  TuneReport r;
  r.kernel = "ew_00000001";
  r.label = "out = 2 * x + sin(y)";
  r.n = 1 << 24;
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, driver 13000)";
  r.key.size_bucket = 24;
  r.bytes_per_launch = 3ull << 26;
  r.buffer_sets = 2;
  r.buffer_bytes = 6ull << 26;
  r.space_size = 320;
  r.kernels_compiled = 3;
  r.pruned.push_back({{{"block", 1024}, {"ipt", 8}, {"vec", 4}, {"grid", -4}},
                      "block=1024 ipt=8 vec=4 grid=cap4w",
                      "registers",
                      "about 96 registers per thread; 1024 threads per block leave 64 without spilling"});
  auto candidate = [](std::string d, double ms, bool def, bool win) {
    TuneCandidate c;
    c.description = std::move(d);
    c.measured = ms > 0;
    c.median_ms = ms;
    c.gbs = ms > 0 ? (3ull << 26) / (ms * 1e6) : 0;
    c.repetitions = 15;
    c.is_default = def;
    c.is_winner = win;
    return c;
  };
  r.candidates.push_back(candidate("block=512 ipt=2 vec=4 grid=8xSM", 0.0700, false, true));
  r.candidates.push_back(candidate("block=256 ipt=1 vec=4 grid=cap4w", 0.0770, true, false));
  TuneCandidate slow = candidate("block=64 ipt=1 vec=1 grid=cap4w", 0.2100, false, false);
  slow.stopped_early = true;
  slow.repetitions = 5;
  r.candidates.push_back(slow);
  TuneCandidate wrong = candidate("block=128 ipt=8 vec=4 grid=cap4w", 0, false, false);
  wrong.problem = "wrong answer: output out differs";
  r.candidates.push_back(wrong);
  for (int k = 0; k < 5; ++k) {
    TuneCandidate skipped = candidate(fmt::format("block=128 ipt=1 vec=4 grid={}xSM", 1 << k), 0, false, false);
    skipped.problem = "not measured: grids are tried for the 3 fastest kernel shapes";
    r.candidates.push_back(skipped);
  }
  r.stored = true;
  r.database = "/cache/tuning.json";

  EXPECT_DOUBLE_EQ(r.speedup(), 0.0770 / 0.0700);
  std::string table = format_tune_table(r);
  EXPECT_NE(table.find("tuning ew_00000001 for n = 16777216 on NVIDIA H100"), std::string::npos) << table;
  EXPECT_NE(table.find("config"), std::string::npos);
  EXPECT_NE(table.find("% of best"), std::string::npos);
  EXPECT_NE(table.find("block=512 ipt=2 vec=4 grid=8xSM       0.0700     2876.1     100.0%  <- winner"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("90.9%  <- default"), std::string::npos) << table;
  EXPECT_NE(table.find("(stopped early after 5)"), std::string::npos) << table;
  EXPECT_NE(table.find("wrong answer: output out differs"), std::string::npos) << table;
  EXPECT_NE(table.find("(5 more not measured: grids are tried for the 3 fastest kernel shapes)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("pruned: registers 1"), std::string::npos) << table;
  EXPECT_NE(table.find("e.g. block=1024 ipt=8 vec=4 grid=cap4w: about 96 registers"), std::string::npos)
      << table;
  EXPECT_NE(table.find("winner: block=512 ipt=2 vec=4 grid=8xSM, 1.10x the default's speed"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("stored in /cache/tuning.json for n in [2^24, 2^25)"), std::string::npos) << table;
}

TEST(TuneKernels, EveryShapeAndTheCheckKernelsCompile) {
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.nvrtc())
    GTEST_SKIP() << "NVRTC is not available: " << runtime.fallback_reason();
  // The verification kernels.
  for (unsigned bytes : {1u, 2u, 4u, 8u}) {
    std::string name = fmt::format("gk_tune_check_{}", bytes);
    EXPECT_NO_THROW(runtime.kernels().get({name, detail::tune_check_source()})) << name;
  }
  // The extreme shapes of a mixed-type program's space (every shape compiles
  // on the GPU run; here a sample keeps the test short).
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto b = p.add_input("b", DType::BFloat16);
  auto i = p.add_input("i", DType::Int64);
  p.add_output("o", DType::Float16, p.add(ir::Op::Add, {p.add(ir::Op::Mul, {h, b}), i}));
  p.add_output("m", DType::Int64, p.add(ir::Op::Mod, {i, i}));
  ir::Program optimized = ir::optimize(p);
  codegen::ElementwiseProblem problem = codegen::describe_elementwise(optimized, 1 << 22, true);
  codegen::TuningSpace space = codegen::elementwise_space(problem, codegen::TargetLimits::for_arch(9, 0));
  for (const codegen::TuningConfig& c : space.enumerate().candidates) {
    int64_t block = c.at("block"), ipt = c.at("ipt");
    bool extreme = (block == 64 || block == 1024) && (ipt == 1 || ipt == 8) && c.at("grid") == -4;
    if (!extreme && !(c == space.default_config()))
      continue;
    codegen::CudaKernel k = codegen::emit_cuda(
        optimized, codegen::ElementwiseConfig::from_config(c)->emit_options(false));
    EXPECT_NO_THROW(runtime.kernels().get({k.name, k.source, k.nvrtc_options})) << space.describe(c);
  }
}

} // namespace
} // namespace gpukit
