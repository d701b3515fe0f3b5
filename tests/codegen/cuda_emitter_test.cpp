#include "codegen/cuda_emitter.hpp"

#include "codegen/passes/pipeline.hpp"
#include "golden.hpp"
#include "sample_programs.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <regex>

namespace gpukit::test {
namespace {

using codegen::EmitOptions;

struct GoldenCase {
  std::string name;
  std::function<ir::Program()> make;
  EmitOptions options;
};

EmitOptions scalar() { return {{256, 1}, false, false}; }
EmitOptions vec(unsigned per = 1) { return {{256, per}, true, false}; }
EmitOptions no_restrict(EmitOptions o) {
  o.restrict_pointers = false;
  return o;
}

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases = {
      {"saxpy_sin_f32_vec", [] { return saxpy_sin(); }, vec()},
      {"saxpy_sin_f32_scalar", [] { return saxpy_sin(); }, scalar()},
      {"saxpy_sin_f32_vec_ipt4", [] { return saxpy_sin(); }, {{128, 4}, true, false}},
      {"saxpy_sin_f64_scalar_ipt2", [] { return saxpy_sin(DType::Float64); }, {{256, 2}, false, false}},
      {"index64", [] { return saxpy_sin(); }, {{512, 1}, true, true}},
      {"mixed_f16_f32", [] { return mixed_f16_f32(); }, vec()},
      {"int64_divmod", [] { return int64_divmod(); }, scalar()},
      {"where_compare_bool", [] { return where_compare(); }, vec()},
      {"user_function", [] { return user_function(); }, scalar()},
      {"fma_clamp", [] { return fma_clamp(); }, vec(2)},
      {"aliased_outputs_vec", [] { return aliased_outputs(); }, no_restrict(vec())},
      {"aliased_outputs_scalar", [] { return aliased_outputs(); }, no_restrict(scalar())},
  };
  // Every operation on every type, so that compiling the goldens with NVRTC
  // (tests/runtime) covers all of the emitter's output.
  for (DType t : AllDTypes)
    cases.push_back({fmt::format("every_op_{}", short_name(t)), [t] { return every_op(t); }, scalar()});
  return cases;
}

class CudaGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CudaGolden, MatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  codegen::CudaKernel k = codegen::emit_cuda(ir::optimize(c.make()), c.options);
  expect_golden(c.name + ".cu", k.source);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CudaGolden, ::testing::ValuesIn(golden_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(CudaEmitter, SourceIsSelfContainedAndNamed) {
  ir::Program p = ir::optimize(saxpy_sin());
  codegen::CudaKernel k = codegen::emit_cuda(p, vec());
  EXPECT_TRUE(std::regex_match(k.name, std::regex("ew_[0-9a-f]{8}")));
  EXPECT_EQ(k.name, codegen::kernel_name(p, vec()));
  EXPECT_EQ(k.pack_width, 4u);
  EXPECT_EQ(k.source.find("#include"), std::string::npos);
  EXPECT_NE(k.source.find("ew_"), std::string::npos);
  EXPECT_NE(k.source.find("(examples/saxpy.cpp:18)"), std::string::npos);
  EXPECT_NE(k.source.find("__launch_bounds__(256)"), std::string::npos);
}

TEST(CudaEmitter, NameDependsOnProgramAndOptionsNotLabel) {
  ir::Program a = ir::optimize(saxpy_sin());
  ir::Program b = a;
  b.label = "something else";
  EXPECT_EQ(codegen::kernel_name(a, vec()), codegen::kernel_name(b, vec()));
  EXPECT_NE(codegen::kernel_name(a, vec()), codegen::kernel_name(a, scalar()));
  EXPECT_NE(codegen::kernel_name(a, vec()), codegen::kernel_name(a, vec(2)));
  EXPECT_NE(codegen::kernel_name(a, vec()), codegen::kernel_name(a, {{128, 1}, true, false}));
  EXPECT_NE(codegen::kernel_name(a, vec()), codegen::kernel_name(ir::optimize(saxpy_sin(DType::Float64)), vec()));
  EXPECT_NE(codegen::kernel_name(a, vec()), codegen::kernel_name(a, no_restrict(vec())));
}

// Several outputs, one of them an input: every input is loaded before the
// first store in every loop, and no pointer is __restrict__.
TEST(CudaEmitter, AliasedOutputsReadOldInputs) {
  ir::Program p = ir::optimize(aliased_outputs());
  for (EmitOptions o : {no_restrict(scalar()), no_restrict(vec())}) {
    std::string src = codegen::emit_cuda(p, o).source;
    EXPECT_EQ(src.find("__restrict__"), std::string::npos);
    size_t load = src.rfind("const float x_in_v = x_in[i];");
    ASSERT_NE(load, std::string::npos) << src;
    EXPECT_LT(load, src.rfind("x[i] = ")) << src;
    EXPECT_NE(src.find("z[i] = x_in_v * s1;"), std::string::npos) << src;
  }
}

TEST(CudaEmitter, ScalarPathHasNoPacks) {
  codegen::CudaKernel k = codegen::emit_cuda(ir::optimize(saxpy_sin()), scalar());
  EXPECT_EQ(k.pack_width, 1u);
  EXPECT_EQ(k.source.find("gk_pack"), std::string::npos);
  EXPECT_EQ(k.source.find("gk_div"), std::string::npos);
}

TEST(CudaEmitter, PackWidthFollowsTheWidestOperand) {
  EXPECT_EQ(codegen::pack_width(ir::optimize(saxpy_sin(DType::Float64))), 2u);
  EXPECT_EQ(codegen::pack_width(ir::optimize(mixed_f16_f32())), 4u);
  ir::Program bytes;
  auto m = bytes.add_input("m", DType::Bool);
  bytes.add_output("o", DType::Bool, bytes.add(Op::Not, {m}));
  EXPECT_EQ(codegen::pack_width(ir::optimize(bytes)), 16u);
}

TEST(CudaEmitter, OnlyUsedHelpersAreDefined) {
  codegen::CudaKernel k = codegen::emit_cuda(ir::optimize(int64_divmod()), scalar());
  EXPECT_NE(k.source.find("gk_div_i64"), std::string::npos);
  EXPECT_NE(k.source.find("gk_mod_i64"), std::string::npos);
  EXPECT_EQ(k.source.find("gk_div_i32"), std::string::npos);
  EXPECT_EQ(k.source.find("gk_f16_to_f32"), std::string::npos);
}

TEST(CudaEmitter, UnusableNamesAreReplaced) {
  ir::Program p;
  auto a = p.add_input("n", DType::Float32);      // clashes with the element count
  auto b = p.add_input("my input", DType::Float32); // not an identifier
  auto c = p.add_input("sinf", DType::Float32);   // would hide the math function
  p.add_output("out", DType::Float32, p.add(Op::Sin, {p.add(Op::Add, {p.add(Op::Add, {a, b}), c})}));
  std::string src = codegen::emit_cuda(ir::optimize(p), scalar()).source;
  EXPECT_NE(src.find("const float* __restrict__ gk_in0,  // 'n'"), std::string::npos) << src;
  EXPECT_NE(src.find("gk_in1,  // 'my input'"), std::string::npos) << src;
  EXPECT_NE(src.find("gk_in2,  // 'sinf'"), std::string::npos) << src;
}

TEST(CudaEmitter, RejectsProgramsItCannotEmit) {
  ir::Program empty;
  empty.add_input("x", DType::Float32);
  EXPECT_THROW(codegen::emit_cuda(empty, vec()), Error);
  EXPECT_THROW(codegen::emit_cuda(ir::optimize(saxpy_sin()), {{0, 1}, true, false}), Error);
  EXPECT_THROW(codegen::emit_cuda(ir::optimize(saxpy_sin()), {{256, 0}, true, false}), Error);
  try {
    codegen::emit_cuda(saxpy_sin(), vec()); // not typed
    FAIL() << "an untyped program was emitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
  }
}

} // namespace
} // namespace gpukit::test
