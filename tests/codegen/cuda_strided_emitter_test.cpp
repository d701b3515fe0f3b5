#include "codegen/cuda_strided_emitter.hpp"

#include "codegen/passes/pipeline.hpp"
#include "golden.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

namespace gpukit::test {
namespace {

using codegen::AxisAccess;
using codegen::EmitOptions;
using codegen::StridedArgs;
using ir::Op;

EmitOptions scalar() { return {{256, 1}, false, false}; }

/// out[R, C] = x[R, C] + b[C], as the DSL plans `out = x + b`.
ir::Program broadcast_add() {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto b = p.add_input("b", DType::Float32);
  p.add_output("out", DType::Float32, p.add(Op::Add, {x, b}));
  p.label = "out = x + b  (tests/codegen/cuda_strided_emitter_test.cpp)";
  return p;
}
StridedArgs broadcast_add_args(int64_t r, int64_t c) {
  StridedArgs a;
  a.rank = 2;
  a.extents = {r, c};
  a.inputs = {{c, 1}, {0, 1}};
  a.outputs = {{c, 1}};
  return a;
}

/// out[C, R] = m[R, C].T: output element (i0, i1) reads m at i1 * C + i0,
/// so m's strides are {1, C} (Unit, Strided) and the output's {R, 1}.
ir::Program transpose_copy() {
  ir::Program p;
  auto m = p.add_input("m", DType::Float32);
  p.add_output("out", DType::Float32, m);
  p.label = "out = m.transpose()  (tests/codegen/cuda_strided_emitter_test.cpp)";
  return p;
}
StridedArgs transpose_args(int64_t r, int64_t c) {
  StridedArgs a;
  a.rank = 2;
  a.extents = {c, r};
  a.inputs = {{1, c}};
  a.outputs = {{r, 1}};
  return a;
}

TEST(CudaStridedGolden, BroadcastAdd) {
  auto k = codegen::emit_strided_cuda(ir::optimize(broadcast_add()), scalar(),
                                      codegen::classify(broadcast_add_args(5, 7)));
  expect_golden("broadcast_add.cu", k.source);
}

TEST(CudaStridedGolden, TransposeCopy) {
  auto k = codegen::emit_strided_cuda(ir::optimize(transpose_copy()), scalar(),
                                      codegen::classify(transpose_args(5, 7)));
  expect_golden("transpose_copy.cu", k.source);
}

TEST(CudaStridedEmitter, LayoutClassesAndKeys) {
  auto layout = codegen::classify(broadcast_add_args(5, 7));
  EXPECT_EQ(layout.key(), "r2 in:SU,BU out:SU");
  EXPECT_EQ(codegen::classify(transpose_args(5, 7)).key(), "r2 in:US out:SU");
  // A new view of the same class is the same kernel: strides are arguments.
  auto p = ir::optimize(broadcast_add());
  EXPECT_EQ(codegen::emit_strided_cuda(p, scalar(), layout).name,
            codegen::emit_strided_cuda(p, scalar(), codegen::classify(broadcast_add_args(9, 3))).name);
}

TEST(CudaStridedEmitter, BroadcastAxesAddNoTermUnitAxesNoMultiply) {
  std::string src = codegen::emit_strided_cuda(ir::optimize(broadcast_add()), scalar(),
                                               codegen::classify(broadcast_add_args(5, 7)))
                        .source;
  EXPECT_NE(src.find("b[gk_i1]"), std::string::npos) << src;
  EXPECT_NE(src.find("x[gk_i0 * gk_x_s0 + gk_i1]"), std::string::npos) << src;
  EXPECT_EQ(src.find("gk_b_s"), std::string::npos) << src;
}

TEST(CudaStridedEmitter, Index64UsesWideOffsets) {
  EmitOptions o = scalar();
  o.index64 = true;
  std::string src =
      codegen::emit_strided_cuda(ir::optimize(transpose_copy()), o, codegen::classify(transpose_args(5, 7))).source;
  EXPECT_NE(src.find("long long gk_e1"), std::string::npos) << src;
  EXPECT_NE(src.find("unsigned long long n"), std::string::npos) << src;
}

TEST(CudaStridedEmitter, RejectsLayoutsThatDoNotFit) {
  auto p = ir::optimize(broadcast_add());
  codegen::StridedLayout flat;
  EXPECT_THROW(codegen::emit_strided_cuda(p, scalar(), flat), Error);
  auto wrong = codegen::classify(transpose_args(5, 7)); // one input, not two
  EXPECT_THROW(codegen::emit_strided_cuda(p, scalar(), wrong), Error);
}

} // namespace
} // namespace gpukit::test
