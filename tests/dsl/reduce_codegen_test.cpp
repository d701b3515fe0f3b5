// The reduction kernels' CUDA: golden files for softmax and layernorm, and
// NVRTC compiles every family (full, row, column) for every dtype where
// NVRTC is installed (the GPU is not needed).
#include "../codegen/golden.hpp"
#include "../codegen/kernel_sources.hpp"

#include "codegen/passes/pipeline.hpp"
#include "codegen/reduction_emitter.hpp"
#include "dsl/gpukit.hpp"
#include "runtime/runtime.hpp"

#include <gtest/gtest.h>

namespace gpukit {
namespace {

ir::Program body_of(DType t) {
  ir::Program p;
  ir::NodeId x = p.add_input("x", t);
  ir::NodeId y = p.add_input("y", t);
  p.add_output("v", t, p.add(ir::Op::Mul, {x, y}));
  return p;
}

TEST(ReduceCodegen, SoftmaxGolden) {
  auto x = Array<float>::random({8, 4096}, 1).named("x");
  Array<float> out({8, 4096});
  KernelInfo info = inspect(out, exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1));
  std::string label = info.label.substr(0, info.label.find("  ("));
  test::expect_golden("reduce_softmax_f32.cu", info.source);
  test::expect_golden("reduce_softmax_f32.plan", info.ir);
}

TEST(ReduceCodegen, LayerNormGolden) {
  auto x = Array<float>::random({8, 4096}, 1).named("x");
  auto g = Array<float>::random({4096}, 2).named("g");
  auto b = Array<float>::random({4096}, 3).named("b");
  Array<float> out({8, 4096});
  KernelInfo info = inspect(out, (x - mean(x, 1)) * rsqrt(var(x, 1) + 1e-5f) * g + b);
  test::expect_golden("reduce_layernorm_f32.cu", info.source);
}


TEST(ReduceCodegen, ColumnSumAndArgMaxGolden) {
  auto x = Array<float>::random({64, 256}, 1).named("x");
  Array<float> cols(Shape(256));
  std::vector<std::string> column = test::reduction_kernels(inspect(cols, sum(x, 0)).source);
  ASSERT_EQ(column.size(), 1u) << "a column sum is one kernel: the last block of a column block adds the slices";
  test::expect_golden("reduce_column_sum_f32.cu", column[0]);
  Array<int64_t> idx(Shape(64));
  test::expect_golden("reduce_row_argmax_f32.cu", inspect(idx, argmax(x, 1)).source);
}

TEST(ReduceCodegen, PerResultEpilogueGolden) {
  // The epilogue runs once per result: in the row kernel's thread 0, and in
  // the last stage's combining pass (reading the first stage's values).
  auto x = Array<float>::random({64, 256}, 1).named("x");
  Array<float> norms(Shape(64));
  test::expect_golden("reduce_row_norm_f32.cu", inspect(norms, sqrt(sum(x * x, 1))).source);
  Array<float> range(Shape(256));
  std::vector<std::string> column = test::reduction_kernels(inspect(range, amax(x, 0) - amin(x, 0)).source);
  ASSERT_EQ(column.size(), 4u) << "two stages, each a partial and a combining pass";
  test::expect_golden("reduce_column_range_f32.partials.cu", column[0]);
  test::expect_golden("reduce_column_range_f32.combine.cu", column[3]);
}

TEST(ReduceCodegen, NvrtcCompilesEveryFamilyAndDType) {
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.nvrtc())
    GTEST_SKIP() << "NVRTC is not available: " << runtime.fallback_reason();
  const ir::ReduceOp ops[] = {ir::ReduceOp::Sum,  ir::ReduceOp::Max,    ir::ReduceOp::Mean,  ir::ReduceOp::Var,
                              ir::ReduceOp::Prod, ir::ReduceOp::ArgMin, ir::ReduceOp::ArgMax};
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64,
                  DType::UInt8}) {
    for (ir::ReduceOp op : ops) {
      ir::ReductionPlan plan;
      ir::add_stage(plan, op, body_of(t), t);
      for (codegen::ReductionKind kind :
           {codegen::ReductionKind::Full, codegen::ReductionKind::Row, codegen::ReductionKind::Column}) {
        codegen::ReductionEmitOptions o;
        o.kind = kind;
        o.row_length = 1000;
        for (const codegen::ReductionKernel& k : codegen::emit_reduction(plan, o).kernels)
          EXPECT_NO_THROW(runtime.kernels().get({k.cuda.name, k.cuda.source, k.cuda.nvrtc_options}))
              << short_name(t) << " " << ir::reduce_op_name(op) << "\n" << k.cuda.source;
      }
    }
  }
  // any/all over a predicate.
  ir::Program p;
  ir::NodeId x = p.add_input("x", DType::Float32);
  p.add_output("v", DType::Bool, p.add(ir::Op::Gt, {x, p.add_constant(ir::Constant::of_float(DType::Float32, 0))}));
  for (ir::ReduceOp op : {ir::ReduceOp::Any, ir::ReduceOp::All}) {
    ir::ReductionPlan plan;
    ir::add_stage(plan, op, p, DType::Bool);
    for (const codegen::ReductionKernel& k : codegen::emit_reduction(plan, {}).kernels)
      EXPECT_NO_THROW(runtime.kernels().get({k.cuda.name, k.cuda.source, k.cuda.nvrtc_options})) << k.cuda.source;
  }
}

TEST(ReduceCodegen, LongRowsStreamInsteadOfCaching) {
  rt::Runtime& runtime = rt::Runtime::get();
  ir::ReductionPlan plan;
  ir::add_stage(plan, ir::ReduceOp::Sum, body_of(DType::Float32), DType::Float32);
  codegen::ReductionEmitOptions o;
  o.kind = codegen::ReductionKind::Row;
  o.row_length = 1 << 20;
  auto ks = codegen::emit_reduction(plan, o);
  ASSERT_EQ(ks.kernels.size(), 1u);
  EXPECT_NE(ks.kernels[0].cuda.source.find("re-read"), std::string::npos);
  if (runtime.nvrtc())
    EXPECT_NO_THROW(runtime.kernels().get({ks.kernels[0].cuda.name, ks.kernels[0].cuda.source,
                                           ks.kernels[0].cuda.nvrtc_options}));
}

TEST(ReduceCodegen, ColumnKernelLoadsPacksWithLoadsInFlight) {
  ir::ReductionPlan plan;
  ir::add_stage(plan, ir::ReduceOp::Sum, body_of(DType::Float32), DType::Float32);
  codegen::ReductionEmitOptions o;
  o.kind = codegen::ReductionKind::Column;
  auto ks = codegen::emit_reduction(plan, o);
  ASSERT_EQ(ks.kernels.size(), 1u) << "one stage: one kernel, its last block per column block adds the slices";
  EXPECT_EQ(ks.kernels[0].role, codegen::ReductionKernel::Role::Fused);
  EXPECT_EQ(ks.pack_width, 4u);
  EXPECT_NE(ks.kernels[0].cuda.source.find("gk_pack<float, 4>"), std::string::npos) << ks.kernels[0].cuda.source;
  o.fuse_column = false;
  EXPECT_EQ(codegen::emit_reduction(plan, o).kernels.size(), 2u) << "a partial and a combining pass";
  // 4096 x 8192 float32 on 132 SMs: 64 column blocks of 32 lanes x 5 row
  // slices (about 2 blocks per SM, <= 64 slices).
  EXPECT_EQ(codegen::column_threads(8192, 4), 2048u);
  EXPECT_EQ(codegen::column_blocks(8192, 4), 64u);
  EXPECT_EQ(codegen::column_splits(1, 4096, 8192, 132, 4), 5u);
  EXPECT_EQ(codegen::column_splits(1, 4096, 8192, 132, 4, /*one_kernel=*/true), 8u);
  EXPECT_EQ(codegen::column_threads(53, 4), 53u);
  EXPECT_LE(codegen::column_splits(1, 1 << 20, 64, 132, 4), 64u);
}

} // namespace
} // namespace gpukit
