#include "codegen/passes/constant_fold.hpp"

#include "codegen/cpu_evaluator.hpp"
#include "codegen/ir_printer.hpp"
#include "codegen/passes/dead_code.hpp"
#include "codegen/passes/pipeline.hpp"
#include "codegen/passes/type_infer.hpp"
#include "sample_programs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace gpukit::test {
namespace {

std::string body(const ir::Program& p) {
  std::string text = ir::print(p);
  return text.substr(text.find('\n', text.find("kernel(")) + 1);
}

/// fold_constants then remove_dead_nodes, printed.
std::string folded(const ir::Program& p) {
  return body(ir::remove_dead_nodes(ir::fold_constants(ir::infer_types(p))));
}

ir::NodeId lit(ir::Program& p, DType t, double v) {
  return p.add_constant(is_floating(t) ? ir::Constant{t, 0, v} : ir::Constant::of_int(t, static_cast<int64_t>(v)));
}

TEST(ConstantFold, FoldsLiteralsIncludingCasts) {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto three = lit(p, DType::Float64, 3.0);
  auto half = lit(p, DType::Float64, 0.5);
  // x * (3 + 0.5): the literal sum folds, then the weak f64 literal is cast to f32 and folds too.
  p.add_output("a", DType::Float32, p.add(Op::Mul, {x, p.add(Op::Add, {three, half})}));
  p.add_output("b", DType::Int32, p.add_cast(DType::Int32, lit(p, DType::Float64, -3.7)));
  p.add_output("c", DType::UInt8, p.add_cast(DType::UInt8, lit(p, DType::Float32, 300.0)));
  p.add_output("d", DType::Float16, p.add_cast(DType::Float16, lit(p, DType::Float64, 0.1)));
  p.add_output("e", DType::Int32, p.add(Op::Div, {lit(p, DType::Int32, 7), lit(p, DType::Int32, 0)}));
  p.add_output("f", DType::Bool, p.add(Op::Lt, {lit(p, DType::Int32, 1), lit(p, DType::Float32, 1.5)}));
  EXPECT_EQ(folded(p), R"(  %0 = input x : f32
  %1 = const 3.5 : f32
  %2 = mul %0, %1 : f32
  %3 = const -3 : i32
  %4 = const 255 : u8
  %5 = const 0.099975586 : f16
  %6 = const 0 : i32
  %7 = const true : bool
  a = %2
  b = %3
  c = %4
  d = %5
  e = %6
  f = %7
)");
}

TEST(ConstantFold, ExactSimplificationsOnIntegers) {
  ir::Program p;
  auto i = p.add_input("i", DType::Int32);
  auto zero = lit(p, DType::Int32, 0), one = lit(p, DType::Int32, 1);
  p.add_output("a", DType::Int32, p.add(Op::Mul, {i, one}));
  p.add_output("b", DType::Int32, p.add(Op::Add, {zero, i}));
  p.add_output("c", DType::Int32, p.add(Op::Sub, {i, i}));
  p.add_output("d", DType::Int32, p.add(Op::Neg, {p.add(Op::Neg, {i})}));
  p.add_output("e", DType::Int32, p.add(Op::Floor, {p.add(Op::Div, {i, one})}));
  p.add_output("f", DType::Int32, p.add_cast(DType::Int32, i));
  EXPECT_EQ(folded(p), R"(  %0 = input i : i32
  %1 = const 0 : i32
  a = %0
  b = %0
  c = %1
  d = %0
  e = %0
  f = %0
)");
}

TEST(ConstantFold, FloatSimplificationsAreBitExactOnly) {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  p.add_output("a", DType::Float32, p.add(Op::Mul, {x, lit(p, DType::Float32, 1.0)}));  // x
  p.add_output("b", DType::Float32, p.add(Op::Add, {x, lit(p, DType::Float32, 0.0)}));  // kept: -0 + 0 = +0
  p.add_output("c", DType::Float32, p.add(Op::Add, {x, lit(p, DType::Float32, -0.0)})); // x
  p.add_output("d", DType::Float32, p.add(Op::Sub, {x, lit(p, DType::Float32, 0.0)}));  // x
  p.add_output("e", DType::Float32, p.add(Op::Sub, {x, x}));                            // kept: inf - inf
  p.add_output("f", DType::Float32, p.add(Op::Neg, {p.add(Op::Neg, {x})}));             // x
  EXPECT_EQ(folded(p), R"(  %0 = input x : f32
  %1 = const 0 : f32
  %2 = add %0, %1 : f32
  %3 = sub %0, %0 : f32
  a = %0
  b = %2
  c = %0
  d = %0
  e = %3
  f = %0
)");
}

TEST(ConstantFold, HalfCastsFoldOnlyWhenAlreadyRounded) {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto sum = p.add(Op::Add, {h, h});
  p.add_output("a", DType::Float16, p.add_cast(DType::Float16, sum)); // rounds the unrounded sum: kept
  p.add_output("b", DType::Float16, p.add_cast(DType::Float16, h));   // h is rounded: removed
  EXPECT_EQ(folded(p), R"(  %0 = input h : f16
  %1 = add %0, %0 : f16
  %2 = cast %1 : f16
  a = %2
  b = %0
)");
}

TEST(ConstantFold, SelectAndLogic) {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto y = p.add_input("y", DType::Float32);
  auto m = p.add_input("m", DType::Bool);
  auto yes = p.add_constant(ir::Constant::of_int(DType::Bool, 1));
  auto no = p.add_constant(ir::Constant::of_int(DType::Bool, 0));
  p.add_output("a", DType::Float32, p.add(Op::Select, {yes, x, y}));
  p.add_output("b", DType::Float32, p.add(Op::Select, {no, x, y}));
  p.add_output("c", DType::Float32, p.add(Op::Select, {m, y, y}));
  p.add_output("d", DType::Bool, p.add(Op::Not, {p.add(Op::Not, {m})}));
  p.add_output("e", DType::Bool, p.add(Op::And, {yes, no}));
  EXPECT_EQ(folded(p), R"(  %0 = input x : f32
  %1 = input y : f32
  %2 = input m : bool
  %3 = const false : bool
  a = %0
  b = %1
  c = %1
  d = %2
  e = %3
)");
}

// --- Folding never changes an answer -----------------------------------------------

/// A random expression over inputs x: f32, h: f16, i: i32, l: i64 and
/// literals (weak and of every type), with many literal-only subtrees.
class RandomProgram {
public:
  explicit RandomProgram(uint32_t seed) : Rng(seed) {}

  ir::Program make() {
    P = ir::Program();
    Leaves = {P.add_input("x", DType::Float32), P.add_input("h", DType::Float16),
              P.add_input("i", DType::Int32), P.add_input("l", DType::Int64)};
    const DType outs[] = {DType::Float32, DType::Float64, DType::Int32, DType::Float16, DType::Bool};
    for (int k = 0; k < 5; ++k)
      P.add_output(fmt::format("o{}", k), outs[k], expr(4));
    return std::move(P);
  }

private:
  ir::NodeId literal() {
    const DType types[] = {DType::Bool, DType::UInt8, DType::Int32, DType::Int64,
                           DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
    DType t = types[pick(8)];
    const double values[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.75, -7.0, 1e30, 65504.0, 300.0,
                             2147483647.0, -2147483648.0, std::nan(""), INFINITY, 1e-40};
    double v = values[pick(16)];
    if (!is_floating(t) && !std::isfinite(v))
      v = 5;
    return is_floating(t) ? P.add_constant({t, 0, v}) : P.add_constant(ir::Constant::of_int(t, static_cast<int64_t>(v)));
  }

  ir::NodeId expr(int depth) {
    if (depth == 0 || pick(5) == 0)
      return pick(2) ? literal() : Leaves[pick(Leaves.size())];
    const Op ops[] = {Op::Neg, Op::Abs, Op::Sqrt, Op::Exp, Op::Sin, Op::Floor, Op::Round, Op::Not,
                      Op::Sigmoid, Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Mod, Op::Min, Op::Max,
                      Op::Pow, Op::Lt, Op::Eq, Op::And, Op::Or, Op::Fma, Op::Clamp, Op::Select, Op::Cast};
    Op op = ops[pick(std::size(ops))];
    if (op == Op::Cast) {
      const DType types[] = {DType::Bool, DType::UInt8, DType::Int32, DType::Int64,
                             DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
      return P.add_cast(types[pick(8)], expr(depth - 1));
    }
    llvm::SmallVector<ir::NodeId, 3> args;
    for (int k = 0; k < ir::op_arity(op); ++k)
      args.push_back(pick(3) == 0 ? literal() : expr(depth - 1));
    return P.add(op, args);
  }

  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(Rng); }

  std::mt19937 Rng;
  ir::Program P;
  std::vector<ir::NodeId> Leaves;
};

std::vector<uint8_t> run(const ir::Program& p, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-10, 10);
  std::uniform_int_distribution<int32_t> integer(-100, 100);
  std::vector<float> x(n);
  std::vector<half> h(n);
  std::vector<int32_t> i(n);
  std::vector<int64_t> l(n);
  for (size_t e = 0; e < n; ++e) {
    x[e] = e % 17 == 0 ? 0.0f : real(rng);
    h[e] = half(real(rng));
    i[e] = integer(rng);
    l[e] = integer(rng) * int64_t(1000000007);
  }
  std::vector<uint8_t> out;
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<void*> out_ptrs;
  for (const ir::Output& o : p.outputs())
    outputs.emplace_back(n * size_of(o.type), 0xcd);
  for (auto& o : outputs)
    out_ptrs.push_back(o.data());
  codegen::evaluate(p, {x.data(), h.data(), i.data(), l.data()}, out_ptrs, {}, n);
  for (auto& o : outputs)
    out.insert(out.end(), o.begin(), o.end());
  return out;
}

TEST(ConstantFold, NeverChangesAnAnswer) {
  // The unfolded program and the optimized one, on the same inputs, give the
  // same bytes (NaNs included: both sides compute them the same way).
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    ir::Program p = RandomProgram(seed).make();
    ir::Program typed = ir::infer_types(p);
    ir::Program optimized = ir::optimize(p);
    ASSERT_EQ(run(typed, 257, seed), run(optimized, 257, seed))
        << "seed " << seed << "\nbefore:\n" << ir::print(typed) << "after:\n" << ir::print(optimized);
  }
}

} // namespace
} // namespace gpukit::test
