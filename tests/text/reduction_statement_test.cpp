// Text programs with reductions run end to end (dsl/text/reduction_statement.cpp
// through ProgramRunner) on the runtime's backend — the CPU fallback here,
// the GPU where there is one — against float64 host references computed
// from the same random inputs.
#include "dsl/text/lower.hpp"
#include "dsl/text/parser.hpp"
#include "dsl/text/program_runner.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cmath>

namespace gpukit::text {
namespace {

std::string example(std::string_view name) {
  auto buffer = llvm::MemoryBuffer::getFile(fmt::format("{}/examples/{}", GPUKIT_SOURCE_DIR, name));
  EXPECT_TRUE(bool(buffer)) << name;
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// A program run once: its inputs (random, as `gpukit run --seed 1` draws
/// them) and outputs, by name.
struct ProgramRun {
  LoweredProgram lowered;
  std::map<std::string, HostArray> arrays;

  double at(const std::string& name, size_t k) const { return arrays.at(name).get(k); }
};

ProgramRun run_program(std::string_view text, std::map<std::string, int64_t> sizes) {
  ProgramRun run;
  LowerOptions opts;
  opts.sizes = std::move(sizes);
  run.lowered = lower(parse_program(text, "t.gk"), opts);
  run.lowered.check_scalars_bound();
  size_t n = static_cast<size_t>(run.lowered.elements());
  CompiledProgram cp = compile_program(run.lowered, {.n = n});
  std::vector<HostArray> inputs;
  for (const ArrayInfo& a : run.lowered.inputs) {
    HostArray h = HostArray::zeros(a.dtype, a.extents);
    h.fill_random(1 + a.random_index, a.random_lo, a.random_hi);
    run.arrays[a.name] = h;
    inputs.push_back(std::move(h));
  }
  ProgramRunner runner(cp, run.lowered, n);
  runner.upload(inputs);
  runner.poison_outputs();
  runner.launch();
  std::vector<HostArray> outputs;
  runner.download(outputs);
  EXPECT_EQ(outputs.size(), run.lowered.outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k)
    run.arrays[run.lowered.outputs[k].name] = std::move(outputs[k]);
  return run;
}

TEST(TextReductionRun, SoftmaxExampleRowsSumToOne) {
  const int64_t rows = 64, cols = 100;
  ProgramRun r = run_program(example("softmax.gk"), {{"R", rows}, {"C", cols}});
  ASSERT_EQ(r.arrays.at("out").shape, (std::vector<int64_t>{rows, cols}));
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double m = -INFINITY, s = 0, row_sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::fmax(m, r.at("x", i * cols + c));
    for (int64_t c = 0; c < cols; ++c)
      s += std::exp(r.at("x", i * cols + c) - m);
    for (int64_t c = 0; c < cols; ++c) {
      double got = r.at("out", i * cols + c);
      row_sum += got;
      worst = std::fmax(worst, std::abs(got - std::exp(r.at("x", i * cols + c) - m) / s));
      ASSERT_FALSE(std::isnan(got)) << i << "," << c;
    }
    EXPECT_NEAR(row_sum, 1.0, 1e-5) << "row " << i;
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(TextReductionRun, LayerNormExampleMatchesFloat64) {
  const int64_t rows = 16, cols = 256;
  ProgramRun r = run_program(example("layernorm.gk"), {{"R", rows}, {"C", cols}});
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c)
      m += r.at("x", i * cols + c);
    m /= cols;
    for (int64_t c = 0; c < cols; ++c)
      v += (r.at("x", i * cols + c) - m) * (r.at("x", i * cols + c) - m);
    v /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      double ref = (r.at("x", i * cols + c) - m) / std::sqrt(v + 1e-5) * r.at("gamma", c) + r.at("beta", c);
      double got = r.at("out", i * cols + c);
      ASSERT_FALSE(std::isnan(got));
      worst = std::fmax(worst, std::abs(got - ref));
    }
  }
  EXPECT_LT(worst, 1e-4);
}

// Every kernel family and several reductions in one program, with an
// elementwise statement beside them.
TEST(TextReductionRun, EveryFamilyMatchesFloat64) {
  const int64_t R = 5, C = 7;
  ProgramRun r = run_program("x: f32[R, C] ~ uniform(-1, 1)\n"
                      "w: f32[C] ~ uniform(0, 2)\n"
                      "rows = sum(x * w, axis=1)\n"
                      "cols = mean(x, axis=0)\n"
                      "v = var(x)\n"
                      "n = sqrt(sum(x * x))\n"
                      "top = max(x, axis=0, keepdims=true)\n"
                      "arg = argmax(x, axis=-1)\n"
                      "big = any(x > 0.5, axis=1)\n"
                      "spread = max(x, axis=0) - min(x, axis=0)\n"
                      "twice = x * 2\n",
                      {{"R", R}, {"C", C}});
  EXPECT_EQ(r.arrays.at("top").shape, (std::vector<int64_t>{1, C}));
  EXPECT_TRUE(r.arrays.at("n").shape.empty()); // 0-d
  auto x = [&](int64_t i, int64_t c) { return r.at("x", i * C + c); };
  double all_sum = 0, all_sq = 0;
  for (int64_t i = 0; i < R; ++i) {
    double s = 0, best = -INFINITY;
    int64_t best_at = 0;
    bool any = false;
    for (int64_t c = 0; c < C; ++c) {
      s += x(i, c) * r.at("w", c);
      all_sum += x(i, c);
      all_sq += x(i, c) * x(i, c);
      if (x(i, c) > best) {
        best = x(i, c);
        best_at = c;
      }
      any |= x(i, c) > 0.5;
    }
    EXPECT_NEAR(r.at("rows", i), s, 1e-5) << i;
    EXPECT_EQ(r.at("arg", i), best_at) << i;
    EXPECT_EQ(r.at("big", i) != 0, any) << i;
  }
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, hi = -INFINITY, lo = INFINITY;
    for (int64_t i = 0; i < R; ++i) {
      s += x(i, c);
      hi = std::fmax(hi, x(i, c));
      lo = std::fmin(lo, x(i, c));
    }
    EXPECT_NEAR(r.at("cols", c), s / R, 1e-6) << c;
    EXPECT_EQ(r.at("top", c), hi) << c;
    EXPECT_NEAR(r.at("spread", c), hi - lo, 1e-6) << c;
  }
  double mean = all_sum / (R * C);
  double var = 0;
  for (int64_t k = 0; k < R * C; ++k)
    var += (r.at("x", k) - mean) * (r.at("x", k) - mean);
  EXPECT_NEAR(r.at("v", 0), var / (R * C), 1e-6);
  EXPECT_NEAR(r.at("n", 0), std::sqrt(all_sq), 1e-5);
  for (int64_t k = 0; k < R * C; ++k)
    EXPECT_EQ(r.at("twice", k), 2 * r.at("x", k));
}

TEST(TextReductionRun, BytesCountEveryKernel) {
  LowerOptions opts;
  opts.sizes = {{"R", 4}, {"C", 8}};
  LoweredProgram lp = lower(parse_program("x: f32[R, C]\ns = sum(x, axis=1)\nt = x + 1", "t.gk"), opts);
  CompiledProgram cp = compile_program(lp, {.n = 32});
  ProgramRunner runner(cp, lp, 32);
  // t reads and writes 32 floats; s reads 32 and writes 4.
  EXPECT_EQ(runner.bytes_per_launch(), (32 + 32 + 32 + 4) * 4u);
}

TEST(TextReductionRun, UnboundRowLengthIsAssumedForTheSourceOnly) {
  LoweredProgram lp = lower(parse_program("x: f32[R, C]\nout = softmax(x)", "t.gk"));
  CompiledProgram cp = compile_program(lp, {.unbound_extent = 256});
  ASSERT_EQ(cp.reductions.size(), 1u);
  EXPECT_EQ(cp.reductions[0].assumed_sizes, (std::vector<std::string>{"C"}));
  EXPECT_NE(describe_statement(cp.reductions[0]).find("One block per row of 256 elements"), std::string::npos);
  // A column reduction is compiled for any size: nothing assumed.
  lp = lower(parse_program("x: f32[R, C]\nout = sum(x, axis=0)", "t.gk"));
  cp = compile_program(lp);
  EXPECT_TRUE(cp.reductions[0].assumed_sizes.empty());
}

} // namespace
} // namespace gpukit::text
