// Small IR programs shared by the codegen tests: each builds the program a
// front end would produce for one expression (untyped; run ir::optimize).
#pragma once

#include "codegen/ir.hpp"
#include "codegen/passes/type_infer.hpp"

#include <cstring>

namespace gpukit::test {

using ir::Op;

/// out = 2 * x + sin(y), the 2 passed as a weak scalar.
inline ir::Program saxpy_sin(DType t = DType::Float32) {
  ir::Program p;
  auto x = p.add_input("x", t);
  auto y = p.add_input("y", t);
  auto s = p.add_scalar("s0", DType::Float32, true);
  p.add_output("out", t, p.add(Op::Add, {p.add(Op::Mul, {s, x}), p.add(Op::Sin, {y})}));
  p.label = "out = 2 * x + sin(y)  (examples/saxpy.cpp:18)";
  return p;
}

/// out: f16 = h * s0 + x (x: f32, so the sum is f32 and rounds on store);
/// r: f16 = cast<f16>(h * 3) + 1 (the explicit cast rounds mid-expression);
/// e: bf16 = exp(h).
inline ir::Program mixed_f16_f32() {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto x = p.add_input("x", DType::Float32);
  auto s = p.add_scalar("s0", DType::Float32, true);
  p.add_output("out", DType::Float16, p.add(Op::Add, {p.add(Op::Mul, {h, s}), x}));
  auto three = p.add_constant(ir::Constant::of_float(DType::Float64, 3.0));
  auto one = p.add_constant(ir::Constant::of_int(DType::Int32, 1));
  auto rounded = p.add_cast(DType::Float16, p.add(Op::Mul, {h, three}));
  p.add_output("r", DType::Float16, p.add(Op::Add, {rounded, one}));
  p.add_output("e", DType::BFloat16, p.add(Op::Exp, {h}));
  p.label = "out = h * s0 + x; r = f16(h * 3) + 1; e = exp(h)";
  return p;
}

/// x = y + 1; z = x_in * s1, where the output x is the input x_in (as the
/// DSL builds `assign(x, y + 1, z, x * 2)`): z must read the old x.
inline ir::Program aliased_outputs() {
  ir::Program p;
  auto y = p.add_input("y", DType::Float32);
  auto x = p.add_input("x_in", DType::Float32);
  auto one = p.add_scalar("s0", DType::Int32, true);
  auto two = p.add_scalar("s1", DType::Int32, true);
  p.add_output("x", DType::Float32, p.add(Op::Add, {y, one}));
  p.add_output("z", DType::Float32, p.add(Op::Mul, {x, two}));
  p.label = "x = y + 1; z = x * 2";
  return p;
}

/// q = a / b, r = a % c (c: i32, promoted), m = -a % 7.
inline ir::Program int64_divmod() {
  ir::Program p;
  auto a = p.add_input("a", DType::Int64);
  auto b = p.add_input("b", DType::Int64);
  auto c = p.add_input("c", DType::Int32);
  p.add_output("q", DType::Int64, p.add(Op::Div, {a, b}));
  p.add_output("r", DType::Int64, p.add(Op::Mod, {a, c}));
  auto seven = p.add_constant(ir::Constant::of_int(DType::Int32, 7));
  p.add_output("m", DType::Int64, p.add(Op::Mod, {p.add(Op::Neg, {a}), seven}));
  p.label = "q = a / b; r = a % c; m = -a % 7";
  return p;
}

/// hit: bool = x < y && mask; pick: f32 = where(x < y, x, y * 2).
inline ir::Program where_compare() {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto y = p.add_input("y", DType::Float32);
  auto mask = p.add_input("mask", DType::Bool);
  auto less = p.add(Op::Lt, {x, y});
  p.add_output("hit", DType::Bool, p.add(Op::And, {less, mask}));
  auto two = p.add_constant(ir::Constant::of_float(DType::Float64, 2.0));
  p.add_output("pick", DType::Float32, p.add(Op::Select, {p.add(Op::Lt, {x, y}), x, p.add(Op::Mul, {y, two})}));
  p.label = "hit = x < y && mask; pick = where(x < y, x, y * 2)";
  return p;
}

/// sqr(v) = v * v as a user device function; out = sqr(x) + s0 * sqr(y).
inline ir::Program user_function() {
  ir::Program p;
  ir::UserFunction fn;
  fn.name = "sqr";
  fn.result = DType::Float32;
  fn.params = {{"v", DType::Float32}};
  fn.body = "return v * v;";
  fn.host = [](const void* const* args, void* result) {
    float v;
    std::memcpy(&v, args[0], sizeof v);
    float r = v * v;
    std::memcpy(result, &r, sizeof r);
  };
  uint32_t sqr = p.add_function(fn);
  auto x = p.add_input("x", DType::Float32);
  auto y = p.add_input("y", DType::Float32);
  auto s = p.add_scalar("s0", DType::Float32, true);
  p.add_output("out", DType::Float32,
               p.add(Op::Add, {p.add_call(sqr, {x}), p.add(Op::Mul, {s, p.add_call(sqr, {y})})}));
  p.label = "out = sqr(x) + s0 * sqr(y)";
  return p;
}

/// f = fma(x, y, z); c = clamp(x, 0, 1); k: i32 = clamp(i, -5, 5).
inline ir::Program fma_clamp() {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto y = p.add_input("y", DType::Float32);
  auto z = p.add_input("z", DType::Float32);
  auto i = p.add_input("i", DType::Int32);
  p.add_output("f", DType::Float32, p.add(Op::Fma, {x, y, z}));
  auto zero = p.add_constant(ir::Constant::of_float(DType::Float64, 0.0));
  auto one = p.add_constant(ir::Constant::of_float(DType::Float64, 1.0));
  p.add_output("c", DType::Float32, p.add(Op::Clamp, {x, zero, one}));
  auto lo = p.add_constant(ir::Constant::of_int(DType::Int32, -5));
  auto hi = p.add_constant(ir::Constant::of_int(DType::Int32, 5));
  p.add_output("k", DType::Int32, p.add(Op::Clamp, {i, lo, hi}));
  p.label = "f = fma(x, y, z); c = clamp(x, 0, 1); k = clamp(i, -5, 5)";
  return p;
}

/// Every operation that accepts operands of type `t`, each in its own output
/// (r_<op>), plus a cast of `a` to every type (to_<type>); inputs a, b, c: t.
inline ir::Program every_op(DType t) {
  ir::Program p;
  auto a = p.add_input("a", t);
  auto b = p.add_input("b", t);
  auto c = p.add_input("c", t);
  auto m = p.add_input("m", DType::Bool);
  // Each result is stored in the type its operation computes (no output casts).
  auto natural_type = [&](Op op, llvm::ArrayRef<ir::NodeId> args) {
    ir::Program probe;
    llvm::SmallVector<ir::NodeId, 3> probe_args;
    for (ir::NodeId arg : args)
      probe_args.push_back(probe.add_input("v", p.node(arg).type));
    ir::NodeId result = probe.add(op, probe_args);
    return ir::infer_types(probe).node(result).type;
  };
#define GPUKIT_OP_OUTPUT(op, ...)                                                                  \
  {                                                                                                \
    ir::NodeId n = p.add(Op::op, {__VA_ARGS__});                                                   \
    p.add_output(std::string("r_") + std::string(ir::op_name(Op::op)),                            \
                 natural_type(Op::op, {__VA_ARGS__}), n);                                         \
  }
  GPUKIT_OP_OUTPUT(Neg, a)
  GPUKIT_OP_OUTPUT(Abs, a)
  GPUKIT_OP_OUTPUT(Floor, a)
  GPUKIT_OP_OUTPUT(Ceil, a)
  GPUKIT_OP_OUTPUT(Round, a)
  GPUKIT_OP_OUTPUT(Sqrt, a)
  GPUKIT_OP_OUTPUT(Rsqrt, a)
  GPUKIT_OP_OUTPUT(Exp, a)
  GPUKIT_OP_OUTPUT(Exp2, a)
  GPUKIT_OP_OUTPUT(Log, a)
  GPUKIT_OP_OUTPUT(Log2, a)
  GPUKIT_OP_OUTPUT(Log10, a)
  GPUKIT_OP_OUTPUT(Sin, a)
  GPUKIT_OP_OUTPUT(Cos, a)
  GPUKIT_OP_OUTPUT(Tan, a)
  GPUKIT_OP_OUTPUT(Tanh, a)
  GPUKIT_OP_OUTPUT(Sigmoid, a)
  GPUKIT_OP_OUTPUT(Erf, a)
  GPUKIT_OP_OUTPUT(Add, a, b)
  GPUKIT_OP_OUTPUT(Sub, a, b)
  GPUKIT_OP_OUTPUT(Mul, a, b)
  GPUKIT_OP_OUTPUT(Div, a, b)
  GPUKIT_OP_OUTPUT(Mod, a, b)
  GPUKIT_OP_OUTPUT(Min, a, b)
  GPUKIT_OP_OUTPUT(Max, a, b)
  GPUKIT_OP_OUTPUT(Pow, a, b)
  GPUKIT_OP_OUTPUT(Fma, a, b, c)
  GPUKIT_OP_OUTPUT(Clamp, a, b, c)
  GPUKIT_OP_OUTPUT(Select, m, a, b)
  GPUKIT_OP_OUTPUT(Lt, a, b)
  GPUKIT_OP_OUTPUT(Le, a, b)
  GPUKIT_OP_OUTPUT(Gt, a, b)
  GPUKIT_OP_OUTPUT(Ge, a, b)
  GPUKIT_OP_OUTPUT(Eq, a, b)
  GPUKIT_OP_OUTPUT(Ne, a, b)
  GPUKIT_OP_OUTPUT(And, a, b)
  GPUKIT_OP_OUTPUT(Or, a, b)
  GPUKIT_OP_OUTPUT(Not, a)
#undef GPUKIT_OP_OUTPUT
  for (DType to : AllDTypes)
    p.add_output(std::string("to_") + std::string(short_name(to)), to, p.add_cast(to, a));
  p.label = std::string("every operation on ") + std::string(short_name(t));
  return p;
}

} // namespace gpukit::test
