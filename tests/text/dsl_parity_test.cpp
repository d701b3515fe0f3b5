// The text front end and the C++ DSL build the same kernel for the same
// expression: `gpukit dump -e 'out = 2*x + sin(y)'` prints the CUDA that
// `out = 2 * x + sin(y);` runs (only the label comment, which says where the
// expression was written, differs). Reductions too: the same plan gives the
// same kernels.
#include "../codegen/kernel_sources.hpp"
#include "dsl/gpukit.hpp"
#include "dsl/text/parser.hpp"
#include "dsl/text/program_runner.hpp"

#include <gtest/gtest.h>

namespace gpukit::text {
namespace {

std::string without_label(const std::string& source) {
  EXPECT_TRUE(source.starts_with("// gpukit kernel ")) << source;
  return source.substr(source.find('\n') + 1);
}

std::string text_source(std::string_view program) {
  LoweredProgram lp = lower(parse_program(program, "-e"));
  return compile_program(lp).cuda.source;
}

TEST(DslParity, SaxpyLikeExpressionGivesTheSameCuda) {
  auto x = Array<float>::random({1000}, 1).named("x");
  auto y = Array<float>::random({1000}, 2).named("y");
  Array<float> out(x.shape());
  out.named("out");
  std::string cpp = source_of(out, 2 * x + sin(y));
  std::string text = text_source("out = 2*x + sin(y)");
  EXPECT_EQ(without_label(text), without_label(cpp));
  // The label lines differ only in where the expression came from.
  EXPECT_TRUE(text.starts_with("// gpukit kernel ")) << text;
  EXPECT_NE(text.find("out = 2 * x + sin(y)  (-e:1)"), std::string::npos) << text;
}

TEST(DslParity, MoreExpressions) {
  auto x = Array<float>::random({64}, 1).named("x");
  auto h = Array<half>::random({64}, 2).named("h");
  auto i = Array<int32_t>::random({64}, 3, 0, 10).named("k");
  Array<float> out(x.shape());
  out.named("out");
  EXPECT_EQ(without_label(text_source("x: f32[N]\nout = where(x > 0, x, 0.01 * x)")),
            without_label(source_of(out, where(x > 0, x, 0.01f * x))));
  EXPECT_EQ(without_label(text_source("h: f16[N]\nx: f32[N]\nout: f32[N]\nout = h * x - 1.5")),
            without_label(source_of(out, h * x - 1.5f)));
  EXPECT_EQ(without_label(text_source("x: f32[N]\nk: i32[N]\nout: f32[N]\nout = clamp(x, 0, 1) + f32(k % 3)")),
            without_label(source_of(out, clamp(x, 0, 1) + cast<float>(i % 3))));
  EXPECT_EQ(without_label(text_source("x: f32[N]\nout = -x ** 2 + sqrt(abs(x))")),
            without_label(source_of(out, -pow(x, 2) + sqrt(abs(x)))));
}

// Equal floating literals (and C++ scalars) share one kernel scalar, so the
// repeated subexpression is computed once, the same way in both front ends.
TEST(DslParity, EqualLiteralsShareOneScalar) {
  auto x = Array<float>::random({64}, 1).named("x");
  Array<float> out(x.shape());
  out.named("out");
  std::string cpp = source_of(out, (x * 0.5 + 1.5) * (x * 0.5 + 1.5) + 2);
  std::string text = text_source("x: f32[N]\nout: f32[N]\nout = (x * 0.5 + 1.5) * (x * 0.5 + 1.5) + 2");
  EXPECT_EQ(without_label(text), without_label(cpp));
  EXPECT_NE(text.find("float s0, float s1, float s4"), std::string::npos) << text;
  EXPECT_EQ(text.find("s2"), std::string::npos) << text;
}


std::string text_reduction_sources(std::string_view program, std::map<std::string, int64_t> sizes) {
  LowerOptions opts;
  opts.sizes = std::move(sizes);
  CompiledProgram cp = compile_program(lower(parse_program(program, "-e"), opts));
  EXPECT_EQ(cp.reductions.size(), 1u);
  std::string out;
  for (const CompiledStatement& c : cp.reductions)
    for (const codegen::ReductionKernel& k : c.compiled->kernels.kernels)
      out += k.cuda.source + "\n";
  return out;
}

TEST(DslParity, SoftmaxGivesTheSameKernels) {
  auto x = Array<float>::random({64, 100}, 1).named("x");
  Array<float> out(x.shape());
  out.named("out");
  KernelInfo cpp = inspect(out, exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1));
  std::string text = text_reduction_sources(
      "x: f32[R, C]\nout = exp(x - max(x, axis=1)) / sum(exp(x - max(x, axis=1)), axis=1)",
      {{"R", 64}, {"C", 100}});
  std::vector<std::string> t = test::reduction_kernel_bodies(text), c = test::reduction_kernel_bodies(cpp.source);
  ASSERT_EQ(t.size(), 1u) << text;
  EXPECT_EQ(t, c);
  EXPECT_EQ(test::reduction_kernel_bodies(text_reduction_sources("x: f32[R, C]\nout = softmax(x)", {{"R", 64}, {"C", 100}})), c);
}

TEST(DslParity, FullAndColumnReductionsGiveTheSameKernels) {
  auto x = Array<float>::random({1000}, 1).named("x");
  auto y = Array<float>::random({1000}, 2).named("y");
  Array<float> total(Shape(1));
  total.named("out");
  std::vector<std::string> cpp = test::reduction_kernel_bodies(inspect(total, sum(x * y)).source);
  std::vector<std::string> text =
      test::reduction_kernel_bodies(text_reduction_sources("x: f32[N]\ny: f32[N]\nout = sum(x * y)", {{"N", 1000}}));
  ASSERT_EQ(text.size(), 2u); // partials, then their combination
  EXPECT_EQ(text, cpp);

  auto m = Array<float>::random({64, 100}, 3).named("x");
  Array<float> means(Shape(100));
  means.named("out");
  cpp = test::reduction_kernel_bodies(inspect(means, mean(m, 0)).source);
  text = test::reduction_kernel_bodies(text_reduction_sources("x: f32[R, C]\nout = mean(x, 0)", {{"R", 64}, {"C", 100}}));
  ASSERT_EQ(text.size(), 1u); // one kernel: the last block of each column block adds the slices
  EXPECT_EQ(text, cpp);
}

} // namespace
} // namespace gpukit::text
