#include "codegen/passes/type_infer.hpp"

#include "codegen/ir_printer.hpp"
#include "sample_programs.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

namespace gpukit::test {
namespace {

/// The node lines of print(), without the header.
std::string body(const ir::Program& p) {
  std::string text = ir::print(p);
  return text.substr(text.find('\n', text.find("kernel(")) + 1);
}

std::string header(const ir::Program& p) {
  std::string text = ir::print(p);
  size_t k = text.find("kernel(");
  return text.substr(k, text.find('\n', k) - k);
}

TEST(TypeInfer, SameTypesNeedNoCasts) {
  ir::Program p = ir::infer_types(saxpy_sin());
  EXPECT_EQ(body(p), R"(  %0 = input x : f32
  %1 = input y : f32
  %2 = scalar s0 : f32
  %3 = mul %2, %0 : f32
  %4 = sin %1 : f32
  %5 = add %3, %4 : f32
  out = %5
)");
  ir::verify_types(p);
}

TEST(TypeInfer, MixedTypesGetCastsAndOutputsTheirDeclaredType) {
  ir::Program p;
  auto i = p.add_input("i", DType::Int32);
  auto x = p.add_input("x", DType::Float32);
  auto b = p.add_input("b", DType::UInt8);
  p.add_output("o", DType::Float64, p.add(Op::Add, {i, x}));
  p.add_output("w", DType::Int64, p.add(Op::Mul, {b, i}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(body(t), R"(  %0 = input i : i32
  %1 = input x : f32
  %2 = input b : u8
  %3 = cast %0 : f32
  %4 = add %3, %1 : f32
  %5 = cast %2 : i32
  %6 = mul %5, %0 : i32
  %7 = cast %4 : f64
  %8 = cast %6 : i64
  o = %7
  w = %8
)");
  ir::verify_types(t);
}

TEST(TypeInfer, WeakScalarTakesTheArrayType) {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto s = p.add_scalar("s0", DType::Float64, true);
  p.add_output("o", DType::Float16, p.add(Op::Mul, {s, h}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(header(t), "kernel(h: f16[]; s0: f16 weak) -> (o: f16[])");
  EXPECT_EQ(body(t), R"(  %0 = input h : f16
  %1 = scalar s0 : f16
  %2 = mul %1, %0 : f16
  o = %2
)");
}

TEST(TypeInfer, WeakScalarOfHigherKindTakesItsDefaultType) {
  ir::Program p;
  auto i = p.add_input("i", DType::Int64);
  auto s = p.add_scalar("s0", DType::Float64, true);
  p.add_output("o", DType::Float32, p.add(Op::Mul, {i, s}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(header(t), "kernel(i: i64[]; s0: f32 weak) -> (o: f32[])");
  EXPECT_EQ(body(t), R"(  %0 = input i : i64
  %1 = scalar s0 : f32
  %2 = cast %0 : f32
  %3 = mul %2, %1 : f32
  o = %3
)");
}

TEST(TypeInfer, StrongScalarKeepsItsType) {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto s = p.add_scalar("s0", DType::Float64, false);
  p.add_output("o", DType::Float64, p.add(Op::Mul, {s, h}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(header(t), "kernel(h: f16[]; s0: f64) -> (o: f64[])");
  EXPECT_EQ(body(t), R"(  %0 = input h : f16
  %1 = scalar s0 : f64
  %2 = cast %0 : f64
  %3 = mul %1, %2 : f64
  o = %3
)");
}

TEST(TypeInfer, WeakScalarUsedAtTwoTypesTakesTheWiderAndIsCast) {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto x = p.add_input("x", DType::Float32);
  auto s = p.add_scalar("s0", DType::Float32, true);
  p.add_output("a", DType::Float16, p.add(Op::Mul, {s, h}));
  p.add_output("b", DType::Float32, p.add(Op::Mul, {s, x}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(header(t), "kernel(h: f16[], x: f32[]; s0: f32 weak) -> (a: f16[], b: f32[])");
  EXPECT_EQ(body(t), R"(  %0 = input h : f16
  %1 = input x : f32
  %2 = scalar s0 : f32
  %3 = cast %2 : f16
  %4 = mul %3, %0 : f16
  %5 = mul %2, %1 : f32
  a = %4
  b = %5
)");
}

TEST(TypeInfer, WeakScalarKeepsItsTypeWhenTheWiderCannotHoldIt) {
  // i32 used at f32 and i64: f32 would lose integers above 2^24, so the
  // scalar stays i32 and is cast at each use.
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto l = p.add_input("l", DType::Int64);
  auto s = p.add_scalar("s0", DType::Int32, true);
  p.add_output("a", DType::Float32, p.add(Op::Add, {x, s}));
  p.add_output("b", DType::Int64, p.add(Op::Add, {l, s}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(header(t), "kernel(x: f32[], l: i64[]; s0: i32 weak) -> (a: f32[], b: i64[])");
  EXPECT_EQ(body(t), R"(  %0 = input x : f32
  %1 = input l : i64
  %2 = scalar s0 : i32
  %3 = cast %2 : f32
  %4 = add %0, %3 : f32
  %5 = cast %2 : i64
  %6 = add %1, %5 : i64
  a = %4
  b = %6
)");
}

TEST(TypeInfer, PredicatesLogicAndSelect) {
  ir::Program p;
  auto i = p.add_input("i", DType::Int32);
  auto x = p.add_input("x", DType::Float32);
  auto lt = p.add(Op::Lt, {i, x});
  auto both = p.add(Op::And, {lt, i}); // i is compared != 0
  p.add_output("m", DType::Bool, p.add(Op::Not, {both}));
  p.add_output("w", DType::Float32, p.add(Op::Select, {i, i, x}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(body(t), R"(  %0 = input i : i32
  %1 = input x : f32
  %2 = cast %0 : f32
  %3 = lt %2, %1 : bool
  %4 = cast %0 : bool
  %5 = and %3, %4 : bool
  %6 = not %5 : bool
  %7 = where %4, %2, %1 : f32
  m = %6
  w = %7
)");
  ir::verify_types(t);
}

TEST(TypeInfer, TranscendentalsComputeInFloat) {
  ir::Program p;
  auto i = p.add_input("i", DType::Int32);
  auto d = p.add_input("d", DType::Float64);
  auto h = p.add_input("h", DType::BFloat16);
  p.add_output("a", DType::Float32, p.add(Op::Sqrt, {i}));
  p.add_output("b", DType::Float64, p.add(Op::Exp, {d}));
  p.add_output("c", DType::BFloat16, p.add(Op::Sin, {h}));
  p.add_output("e", DType::Float32, p.add(Op::Pow, {i, i}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(body(t), R"(  %0 = input i : i32
  %1 = input d : f64
  %2 = input h : bf16
  %3 = cast %0 : f32
  %4 = sqrt %3 : f32
  %5 = exp %1 : f64
  %6 = sin %2 : bf16
  %7 = pow %3, %3 : f32
  a = %4
  b = %5
  c = %6
  e = %7
)");
}

TEST(TypeInfer, IntegerOperationsStayInteger) {
  ir::Program p;
  auto a = p.add_input("a", DType::Int32);
  auto b = p.add_input("b", DType::Int32);
  p.add_output("q", DType::Int32, p.add(Op::Div, {a, b}));
  p.add_output("r", DType::Int32, p.add(Op::Mod, {a, b}));
  p.add_output("f", DType::Int32, p.add(Op::Floor, {a}));
  p.add_output("n", DType::Int32, p.add(Op::Neg, {a}));
  ir::Program t = ir::infer_types(p);
  for (const ir::Node& n : t.nodes())
    EXPECT_EQ(n.type, DType::Int32) << ir::op_name(n.op);
}

TEST(TypeInfer, CallArgumentsAreCastToParameterTypes) {
  ir::Program p = user_function();
  ir::Program q;
  uint32_t sqr = q.add_function(p.functions()[0]);
  auto i = q.add_input("i", DType::Int64);
  q.add_output("o", DType::Float64, q.add_call(sqr, {i}));
  ir::Program t = ir::infer_types(q);
  EXPECT_EQ(body(t), R"(  %0 = input i : i64
  %1 = cast %0 : f32
  %2 = call sqr(%1) : f32
  %3 = cast %2 : f64
  o = %3
)");
}

TEST(TypeInfer, LiteralsAreWeak) {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto i = p.add_input("i", DType::UInt8);
  auto two = p.add_constant(ir::Constant::of_float(DType::Float64, 2.5));
  auto three = p.add_constant(ir::Constant::of_int(DType::Int64, 3));
  p.add_output("a", DType::Float16, p.add(Op::Mul, {h, two}));
  p.add_output("b", DType::UInt8, p.add(Op::Add, {i, three}));
  p.add_output("c", DType::Float32, p.add(Op::Mul, {i, two}));
  ir::Program t = ir::infer_types(p);
  EXPECT_EQ(body(t), R"(  %0 = input h : f16
  %1 = input i : u8
  %2 = const 2.5 : f64
  %3 = const 3 : i64
  %4 = cast %2 : f16
  %5 = mul %0, %4 : f16
  %6 = cast %3 : u8
  %7 = add %1, %6 : u8
  %8 = cast %1 : f32
  %9 = cast %2 : f32
  %10 = mul %8, %9 : f32
  a = %5
  b = %7
  c = %10
)");
}

TEST(TypeInfer, IsIdempotent) {
  for (ir::Program p : {saxpy_sin(), mixed_f16_f32(), int64_divmod(), where_compare(), fma_clamp()}) {
    ir::Program once = ir::infer_types(p);
    EXPECT_EQ(ir::print(ir::infer_types(once)), ir::print(once));
  }
}

TEST(TypeInfer, VerifyRejectsUntypedAndMistypedPrograms) {
  EXPECT_THROW(ir::verify_types(saxpy_sin()), Error);
  ir::Program t = ir::infer_types(saxpy_sin());
  t.node(3).type = DType::Float64;
  try {
    ir::verify_types(t);
    FAIL() << "mistyped program accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(std::string(e.what()).find("f64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace gpukit::test
