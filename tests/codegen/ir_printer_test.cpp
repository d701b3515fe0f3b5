#include "codegen/ir_printer.hpp"

#include "sample_programs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpukit::test {
namespace {

TEST(IrPrinter, PrintsUntypedProgram) {
  EXPECT_EQ(ir::print(saxpy_sin()), R"(# out = 2 * x + sin(y)  (examples/saxpy.cpp:18)
kernel(x: f32[], y: f32[]; s0: f32 weak) -> (out: f32[])
  %0 = input x : f32
  %1 = input y : f32
  %2 = scalar s0 : f32
  %3 = mul %2, %0 : ?
  %4 = sin %1 : ?
  %5 = add %3, %4 : ?
  out = %5
)");
}

TEST(IrPrinter, PrintsFunctionsStrongScalarsAndLiterals) {
  ir::Program p = user_function();
  p.label.clear();
  auto k = p.add_scalar("k", DType::Int64, /*weak=*/false);
  auto c = p.add_constant(ir::Constant::of_float(DType::Float32, -0.0));
  auto t = p.add_constant(ir::Constant::of_int(DType::Bool, 1));
  auto w = p.add(Op::Select, {t, k, c});
  p.add_output("w", DType::Float64, p.add_cast(DType::Float64, w));
  EXPECT_EQ(ir::print(p), R"(fn sqr(v: f32) -> f32
kernel(x: f32[], y: f32[]; s0: f32 weak, k: i64) -> (out: f32[], w: f64[])
  %0 = input x : f32
  %1 = input y : f32
  %2 = scalar s0 : f32
  %3 = call sqr(%0) : f32
  %4 = call sqr(%1) : f32
  %5 = mul %2, %4 : ?
  %6 = add %3, %5 : ?
  %7 = scalar k : i64
  %8 = const -0 : f32
  %9 = const true : bool
  %10 = where %9, %7, %8 : ?
  %11 = cast %10 : f64
  out = %6
  w = %11
)");
}

TEST(IrPrinter, PrintsLiterals) {
  EXPECT_EQ(ir::print_constant(ir::Constant::of_float(DType::Float32, 0.1)), "0.1");
  EXPECT_EQ(ir::print_constant(ir::Constant::of_float(DType::Float64, 0.1)), "0.1");
  EXPECT_EQ(ir::print_constant(ir::Constant::of_int(DType::Int64, -5)), "-5");
  EXPECT_EQ(ir::print_constant(ir::Constant::of_int(DType::Bool, 0)), "false");
  ir::Constant inf{DType::Float32, 0, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(ir::print_constant(inf), "inf");
}

TEST(IrPrinter, HashIgnoresLabelButNotStructure) {
  ir::Program a = saxpy_sin(), b = saxpy_sin();
  b.label = "elsewhere";
  EXPECT_EQ(ir::structural_hash(a), ir::structural_hash(b));
  EXPECT_NE(ir::structural_hash(a), ir::structural_hash(saxpy_sin(DType::Float64)));

  ir::Program c = saxpy_sin();
  c.mutable_scalars()[0].weak = false;
  EXPECT_NE(ir::structural_hash(a), ir::structural_hash(c));
}

TEST(IrPrinter, HashCoversFunctionBodiesAndLiteralSigns) {
  ir::Program a = user_function();
  ir::Program b;
  {
    ir::UserFunction fn = a.functions()[0];
    fn.body = "return v * v * 1.0f;";
    uint32_t sqr = b.add_function(fn);
    auto x = b.add_input("x", DType::Float32);
    auto y = b.add_input("y", DType::Float32);
    auto s = b.add_scalar("s0", DType::Float32, true);
    b.add_output("out", DType::Float32,
                 b.add(Op::Add, {b.add_call(sqr, {x}), b.add(Op::Mul, {s, b.add_call(sqr, {y})})}));
  }
  EXPECT_EQ(ir::print(a).substr(ir::print(a).find('\n') + 1), ir::print(b));
  EXPECT_NE(ir::structural_hash(a), ir::structural_hash(b));

  auto zero = [](double v) {
    ir::Program p;
    p.add_output("o", DType::Float32, p.add_constant(ir::Constant::of_float(DType::Float32, v)));
    return ir::structural_hash(p);
  };
  EXPECT_NE(zero(0.0), zero(-0.0));
}

TEST(IrPrinter, HashIsStableAcrossRuns) {
  // The hash names cached kernels on disk: it must not change between
  // processes or builds. Update this value only with a deliberate format change.
  EXPECT_EQ(ir::structural_hash(saxpy_sin()), ir::structural_hash(saxpy_sin()));
  EXPECT_EQ(fmt::format("{:016x}", ir::structural_hash(saxpy_sin())), "a3577a465d1bdfff");
}

} // namespace
} // namespace gpukit::test
