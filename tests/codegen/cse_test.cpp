#include "codegen/passes/cse.hpp"

#include "codegen/ir_printer.hpp"
#include "codegen/passes/dead_code.hpp"
#include "codegen/passes/pipeline.hpp"
#include "codegen/passes/type_infer.hpp"
#include "sample_programs.hpp"

#include <gtest/gtest.h>

namespace gpukit::test {
namespace {

std::string body(const ir::Program& p) {
  std::string text = ir::print(p);
  return text.substr(text.find('\n', text.find("kernel(")) + 1);
}

TEST(Cse, MergesDuplicates) {
  ir::Program p = ir::eliminate_common_subexpressions(ir::infer_types(where_compare()));
  EXPECT_EQ(body(p), R"(  %0 = input x : f32
  %1 = input y : f32
  %2 = input mask : bool
  %3 = lt %0, %1 : bool
  %4 = and %3, %2 : bool
  %5 = const 2 : f64
  %6 = cast %5 : f32
  %7 = mul %1, %6 : f32
  %8 = where %3, %0, %7 : f32
  hit = %4
  pick = %8
)");
}

TEST(Cse, MergesChainsAndCallsButNotDifferentLiteralsOrTypes) {
  ir::Program p;
  ir::UserFunction fn = user_function().functions()[0];
  uint32_t sqr = p.add_function(fn);
  auto x = p.add_input("x", DType::Float32);
  auto x_again = p.add_input("x", DType::Float32); // a second node for the same input
  p.node(x_again).index = 0;
  auto a = p.add(Op::Sin, {p.add(Op::Neg, {x})});
  auto b = p.add(Op::Sin, {p.add(Op::Neg, {x_again})});
  auto zero = p.add_constant({DType::Float32, 0, 0.0});
  auto minus_zero = p.add_constant({DType::Float32, 0, -0.0});
  auto c1 = p.add_call(sqr, {x});
  auto c2 = p.add_call(sqr, {x_again});
  p.add_output("a", DType::Float32, p.add(Op::Add, {a, zero}));
  p.add_output("b", DType::Float32, p.add(Op::Add, {b, minus_zero}));
  p.add_output("c", DType::Float32, p.add(Op::Mul, {c1, c2}));
  p.add_output("d", DType::Float64, p.add_cast(DType::Float64, a));
  ir::Program merged = ir::eliminate_common_subexpressions(ir::infer_types(p));
  EXPECT_EQ(body(merged), R"(  %0 = input x : f32
  %1 = neg %0 : f32
  %2 = sin %1 : f32
  %3 = const 0 : f32
  %4 = const -0 : f32
  %5 = call sqr(%0) : f32
  %6 = add %2, %3 : f32
  %7 = add %2, %4 : f32
  %8 = mul %5, %5 : f32
  %9 = cast %2 : f64
  a = %6
  b = %7
  c = %8
  d = %9
)");
}

TEST(DeadCode, RemovesWhatNoOutputReadsAndKeepsTheSignature) {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto unused_input = p.add_input("u", DType::Float32);
  p.add(Op::Exp, {unused_input});
  auto kept = p.add(Op::Sin, {x});
  p.add(Op::Cos, {kept});
  p.add_scalar("s", DType::Float32);
  p.add_output("o", DType::Float32, kept);
  ir::Program d = ir::remove_dead_nodes(ir::infer_types(p));
  EXPECT_EQ(ir::print(d), R"(kernel(x: f32[], u: f32[]; s: f32 weak) -> (o: f32[])
  %0 = input x : f32
  %1 = sin %0 : f32
  o = %1
)");
}

TEST(Pipeline, OptimizesSamplePrograms) {
  EXPECT_EQ(body(ir::optimize(mixed_f16_f32())), R"(  %0 = input h : f16
  %1 = input x : f32
  %2 = scalar s0 : f16
  %3 = mul %0, %2 : f16
  %4 = cast %3 : f32
  %5 = add %4, %1 : f32
  %6 = const 3 : f16
  %7 = mul %0, %6 : f16
  %8 = cast %7 : f16
  %9 = const 1 : f16
  %10 = add %8, %9 : f16
  %11 = exp %0 : f16
  %12 = cast %5 : f16
  %13 = cast %11 : bf16
  out = %12
  r = %10
  e = %13
)");
  ir::Program p = ir::optimize(int64_divmod());
  ir::verify_types(p);
  EXPECT_EQ(ir::print(ir::optimize(p)), ir::print(p)); // a fixed point
}

} // namespace
} // namespace gpukit::test
