#include "codegen/cpu_evaluator.hpp"

#include "codegen/ir_printer.hpp"
#include "codegen/kernel_abi.hpp"
#include "codegen/passes/pipeline.hpp"
#include "codegen/passes/type_infer.hpp"
#include "sample_programs.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

// Every operation on every type it accepts, against references computed
// here by hand: integers in __int128 then wrapped (exact), floats in long
// double then rounded (within a few ulps; IEEE operations exactly), half
// precision within one half-ulp of the rounded reference.

namespace gpukit::test {
namespace {

using LD = long double;

/// One array in its storage type.
struct Column {
  DType type;
  std::vector<std::byte> bytes;

  size_t size() const { return bytes.size() / size_of(type); }
  const void* data() const { return bytes.data(); }
  void* data() { return bytes.data(); }

  static Column of(DType t, const std::vector<LD>& values) {
    Column c{t, std::vector<std::byte>(values.size() * size_of(t))};
    for (size_t e = 0; e < values.size(); ++e)
      c.set(e, values[e]);
    return c;
  }

  void set(size_t e, LD v) {
    std::byte* p = bytes.data() + e * size_of(type);
    auto put = [&](auto s) { std::memcpy(p, &s, sizeof s); };
    switch (type) {
    case DType::Bool: return put(uint8_t(v != 0));
    case DType::UInt8: return put(static_cast<uint8_t>(static_cast<int64_t>(v)));
    case DType::Int32: return put(static_cast<int32_t>(static_cast<int64_t>(v)));
    case DType::Int64: return put(static_cast<int64_t>(v));
    case DType::Float16: return put(half(static_cast<float>(v)).bits);
    case DType::BFloat16: return put(bfloat16(static_cast<float>(v)).bits);
    case DType::Float32: return put(static_cast<float>(v));
    case DType::Float64: return put(static_cast<double>(v));
    }
  }

  LD get(size_t e) const {
    const std::byte* p = bytes.data() + e * size_of(type);
    auto take = [&](auto s) {
      std::memcpy(&s, p, sizeof s);
      return s;
    };
    switch (type) {
    case DType::Bool: return take(uint8_t{});
    case DType::UInt8: return take(uint8_t{});
    case DType::Int32: return take(int32_t{});
    case DType::Int64: return take(int64_t{});
    case DType::Float16: return float(half::from_bits(take(uint16_t{})));
    case DType::BFloat16: return float(bfloat16::from_bits(take(uint16_t{})));
    case DType::Float32: return take(float{});
    case DType::Float64: return take(double{});
    }
    return 0;
  }
};

/// The type `op` on operands of `types` computes (what infer_types says).
DType result_type(ir::Op op, llvm::ArrayRef<DType> types) {
  ir::Program p;
  llvm::SmallVector<ir::NodeId, 3> args;
  for (size_t k = 0; k < types.size(); ++k)
    args.push_back(p.add_input(fmt::format("a{}", k), types[k]));
  ir::NodeId n = op == Op::Cast ? p.add_cast(types[0], args[0]) : p.add(op, args);
  return ir::infer_types(p).node(n).type;
}

/// out = op(inputs...) evaluated by the CPU back end, in the op's own result type.
Column run_op(ir::Op op, const std::vector<Column>& inputs, DType cast_to = DType::Float32) {
  ir::Program p;
  llvm::SmallVector<ir::NodeId, 3> args;
  llvm::SmallVector<DType, 3> types;
  for (size_t k = 0; k < inputs.size(); ++k) {
    args.push_back(p.add_input(fmt::format("a{}", k), inputs[k].type));
    types.push_back(inputs[k].type);
  }
  ir::NodeId n;
  DType out_type;
  if (op == Op::Cast) {
    n = p.add_cast(cast_to, args[0]);
    out_type = cast_to;
  } else {
    n = p.add(op, args);
    out_type = result_type(op, types);
  }
  p.add_output("out", out_type, n);
  Column out = Column::of(out_type, std::vector<LD>(inputs[0].size(), 0));
  std::memset(out.data(), 0xcd, out.bytes.size()); // poisoned: every element must be written
  std::vector<const void*> in_ptrs;
  for (const Column& c : inputs)
    in_ptrs.push_back(c.data());
  codegen::evaluate(ir::optimize(p), in_ptrs, {out.data()}, {}, out.size());
  return out;
}

// --- References -----------------------------------------------------------------------

__int128 wrap(DType t, __int128 v) {
  switch (t) {
  case DType::Bool: return v != 0;
  case DType::UInt8: return static_cast<uint8_t>(static_cast<uint64_t>(v));
  case DType::Int32: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  case DType::Int64: return static_cast<int64_t>(static_cast<uint64_t>(v));
  default: ADD_FAILURE() << "not an integer type"; return 0;
  }
}

/// Integer and bool arithmetic: exact in 128 bits, then wrapped; x / 0 == x % 0 == 0.
__int128 int_reference(ir::Op op, DType t, __int128 a, __int128 b, __int128 c) {
  switch (op) {
  case Op::Neg: return wrap(t, -a);
  case Op::Abs: return wrap(t, a < 0 ? -a : a);
  case Op::Floor: case Op::Ceil: case Op::Round: return a;
  case Op::Add: return wrap(t, a + b);
  case Op::Sub: return wrap(t, a - b);
  case Op::Mul: return wrap(t, a * b);
  case Op::Div: return b == 0 ? 0 : wrap(t, a / b);
  case Op::Mod: return b == 0 ? 0 : wrap(t, a % b);
  case Op::Min: return std::min(a, b);
  case Op::Max: return std::max(a, b);
  case Op::Fma: return wrap(t, a * b + c);
  case Op::Clamp: return std::min(std::max(a, b), c);
  default: ADD_FAILURE() << "no integer reference for " << ir::op_name(op); return 0;
  }
}

/// NaN-ignoring min/max with -0 below +0, as documented in cuda_emitter.cpp.
LD ref_min(LD a, LD b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
LD ref_max(LD a, LD b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

LD float_reference(ir::Op op, LD a, LD b, LD c) {
  switch (op) {
  case Op::Neg: return -a;
  case Op::Abs: return fabsl(a);
  case Op::Sqrt: return sqrtl(a);
  case Op::Rsqrt: return 1 / sqrtl(a);
  case Op::Exp: return expl(a);
  case Op::Exp2: return exp2l(a);
  case Op::Log: return logl(a);
  case Op::Log2: return log2l(a);
  case Op::Log10: return log10l(a);
  case Op::Sin: return sinl(a);
  case Op::Cos: return cosl(a);
  case Op::Tan: return tanl(a);
  case Op::Tanh: return tanhl(a);
  case Op::Sigmoid: return 1 / (1 + expl(-a));
  case Op::Erf: return erfl(a);
  case Op::Floor: return floorl(a);
  case Op::Ceil: return ceill(a);
  case Op::Round: return roundl(a);
  case Op::Add: return a + b;
  case Op::Sub: return a - b;
  case Op::Mul: return a * b;
  case Op::Div: return a / b;
  case Op::Mod: return fmodl(a, b);
  case Op::Min: return ref_min(a, b);
  case Op::Max: return ref_max(a, b);
  case Op::Pow: return powl(a, b);
  case Op::Fma: return fmal(a, b, c);
  case Op::Clamp: return ref_min(ref_max(a, b), c);
  default: ADD_FAILURE() << "no float reference for " << ir::op_name(op); return 0;
  }
}

bool compare_reference(ir::Op op, LD a, LD b) {
  switch (op) {
  case Op::Lt: return a < b;
  case Op::Le: return a <= b;
  case Op::Gt: return a > b;
  case Op::Ge: return a >= b;
  case Op::Eq: return a == b;
  case Op::Ne: return a != b;
  default: ADD_FAILURE(); return false;
  }
}

/// Distance in units in the last place of F between two values of F.
template <typename F> uint64_t ulps(F a, F b) {
  using I = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  auto ordered = [](F v) {
    I i = std::bit_cast<I>(v);
    return i < 0 ? std::numeric_limits<I>::min() - i : i;
  };
  __int128 d = static_cast<__int128>(ordered(a)) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

uint64_t half_ulps(DType t, float a, float b) {
  auto ordered = [&](float v) {
    int16_t i = static_cast<int16_t>(t == DType::Float16 ? half(v).bits : bfloat16(v).bits);
    return i < 0 ? int32_t(INT16_MIN) - i : int32_t(i);
  };
  return static_cast<uint64_t>(std::abs(ordered(a) - ordered(b)));
}

/// Whether `actual` (of type t) is within `tolerance` ulps of `expected`.
bool close(DType t, LD actual, LD expected, unsigned tolerance) {
  if (std::isnan(expected))
    return std::isnan(actual);
  switch (t) {
  case DType::Float32: return ulps<float>(float(actual), float(expected)) <= tolerance;
  case DType::Float64: return ulps<double>(double(actual), double(expected)) <= tolerance;
  case DType::Float16:
  case DType::BFloat16: return half_ulps(t, float(actual), float(expected)) <= 1;
  default: return actual == expected;
  }
}

// --- Inputs ------------------------------------------------------------------------------

std::vector<LD> float_values(DType t, size_t random, uint32_t seed, LD lo = -10, LD hi = 10) {
  std::vector<LD> v = {0.0L, -0.0L, 1.0L, -1.0L, 0.5L, -2.5L, 3.0L, 1e-3L, 100.0L, -100.0L,
                       INFINITY, -INFINITY, NAN};
  if (t == DType::Float32) v.push_back(1e-40L);  // subnormal
  if (t == DType::Float64) v.push_back(1e-310L); // subnormal
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(static_cast<double>(lo), static_cast<double>(hi));
  while (v.size() < random)
    v.push_back(dist(rng));
  return v;
}

std::vector<LD> int_values(DType t, size_t random, uint32_t seed) {
  std::vector<LD> v;
  switch (t) {
  case DType::Bool: v = {0, 1, 1, 0}; break;
  case DType::UInt8: v = {0, 1, 2, 7, 127, 128, 255, 254}; break;
  case DType::Int32: v = {0, 1, -1, 7, -7, INT32_MAX, INT32_MIN, INT32_MIN + 1, 46341, -46341}; break;
  case DType::Int64: v = {0, 1, -1, 7, -7, (LD)INT64_MAX, (LD)INT64_MIN, (LD)(INT64_MIN + 1), 3037000500LL}; break;
  default: break;
  }
  std::mt19937_64 rng(seed);
  while (v.size() < random) {
    int64_t r = static_cast<int64_t>(rng());
    switch (t) {
    case DType::Bool: v.push_back(r & 1); break;
    case DType::UInt8: v.push_back(r & 0xff); break;
    case DType::Int32: v.push_back(static_cast<int32_t>(r % 2000) - 1000 + (r % 7 == 0 ? static_cast<int32_t>(r) : 0)); break;
    case DType::Int64: v.push_back(r % 3 == 0 ? r : r % 100000); break;
    default: break;
    }
  }
  return v;
}

/// Every pairing of the values (for binary operations), as two columns.
std::pair<std::vector<LD>, std::vector<LD>> pairs(const std::vector<LD>& v) {
  std::vector<LD> a, b;
  for (LD x : v)
    for (LD y : v) {
      a.push_back(x);
      b.push_back(y);
    }
  return {a, b};
}

constexpr DType FloatTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
constexpr DType IntTypes[] = {DType::Bool, DType::UInt8, DType::Int32, DType::Int64};

unsigned float_tolerance(ir::Op op, DType t) {
  switch (op) {
  case Op::Neg: case Op::Abs: case Op::Floor: case Op::Ceil: case Op::Round: case Op::Mod:
  case Op::Min: case Op::Max: case Op::Clamp:
    return 0;
  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Sqrt:
    return t == DType::Float64 ? 1 : 0; // long double rounds twice for double
  case Op::Fma: case Op::Rsqrt:
    return 1;
  default:
    return t == DType::Float64 ? 2 : 4; // transcendental: a few ulps
  }
}

// --- Tests --------------------------------------------------------------------------------

TEST(CpuEvaluator, FloatUnaryOps) {
  const Op ops[] = {Op::Neg, Op::Abs, Op::Sqrt, Op::Rsqrt, Op::Exp, Op::Exp2, Op::Log, Op::Log2,
                    Op::Log10, Op::Sin, Op::Cos, Op::Tan, Op::Tanh, Op::Sigmoid, Op::Erf,
                    Op::Floor, Op::Ceil, Op::Round};
  for (DType t : FloatTypes)
    for (Op op : ops) {
      Column a = Column::of(t, float_values(t, 200, 1));
      Column out = run_op(op, {a});
      ASSERT_EQ(out.type, t);
      for (size_t e = 0; e < a.size(); ++e) {
        LD expected = float_reference(op, a.get(e), 0, 0);
        // sigmoid is 1 / (1 + exp(-x)) by definition: below x ~ -88 (float)
        // exp(-x) overflows and the result is 0 rather than a subnormal.
        LD tiny = t == DType::Float64 ? LD(std::numeric_limits<double>::min()) : LD(std::numeric_limits<float>::min());
        if (op == Op::Sigmoid && expected < tiny && out.get(e) == 0)
          continue;
        EXPECT_TRUE(close(t, out.get(e), expected, float_tolerance(op, t)))
            << ir::op_name(op) << "(" << double(a.get(e)) << ") : " << short_name(t) << " = "
            << double(out.get(e)) << ", expected " << double(expected);
      }
    }
}

TEST(CpuEvaluator, FloatBinaryAndTernaryOps) {
  const Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Mod, Op::Min, Op::Max, Op::Pow};
  for (DType t : FloatTypes) {
    auto [av, bv] = pairs(float_values(t, 30, 2));
    Column a = Column::of(t, av), b = Column::of(t, bv);
    for (Op op : binary) {
      Column out = run_op(op, {a, b});
      ASSERT_EQ(out.type, t);
      for (size_t e = 0; e < a.size(); ++e) {
        LD expected = float_reference(op, a.get(e), b.get(e), 0);
        EXPECT_TRUE(close(t, out.get(e), expected, float_tolerance(op, t)))
            << ir::op_name(op) << "(" << double(a.get(e)) << ", " << double(b.get(e)) << ") : "
            << short_name(t) << " = " << double(out.get(e)) << ", expected " << double(expected);
      }
    }
    Column c = Column::of(t, float_values(t, a.size(), 3));
    for (Op op : {Op::Fma, Op::Clamp}) {
      Column out = run_op(op, {a, b, c});
      for (size_t e = 0; e < a.size(); ++e) {
        LD expected = float_reference(op, a.get(e), b.get(e), c.get(e));
        EXPECT_TRUE(close(t, out.get(e), expected, float_tolerance(op, t)))
            << ir::op_name(op) << "(" << double(a.get(e)) << ", " << double(b.get(e)) << ", "
            << double(c.get(e)) << ") : " << short_name(t) << " = " << double(out.get(e));
      }
    }
  }
}

TEST(CpuEvaluator, IntegerOps) {
  const Op ops[] = {Op::Neg, Op::Abs, Op::Floor, Op::Ceil, Op::Round, Op::Add, Op::Sub, Op::Mul,
                    Op::Div, Op::Mod, Op::Min, Op::Max, Op::Fma, Op::Clamp};
  for (DType t : IntTypes) {
    auto [av, bv] = pairs(int_values(t, 24, 4));
    std::vector<LD> cv = int_values(t, av.size(), 5);
    Column a = Column::of(t, av), b = Column::of(t, bv), c = Column::of(t, cv);
    for (Op op : ops) {
      int arity = ir::op_arity(op);
      std::vector<Column> in = {a, b, c};
      in.resize(arity);
      Column out = run_op(op, in);
      ASSERT_EQ(out.type, t) << ir::op_name(op);
      for (size_t e = 0; e < a.size(); ++e) {
        auto v = [&](const Column& col) { return static_cast<__int128>(static_cast<int64_t>(col.get(e))); };
        __int128 expected = int_reference(op, t, v(a), v(b), v(c));
        EXPECT_EQ(static_cast<int64_t>(out.get(e)), static_cast<int64_t>(expected))
            << ir::op_name(op) << "(" << int64_t(v(a)) << ", " << int64_t(v(b)) << ", " << int64_t(v(c))
            << ") : " << short_name(t);
      }
    }
  }
}

TEST(CpuEvaluator, ComparisonsAndSelectOnEveryType) {
  const Op ops[] = {Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne};
  for (DType t : AllDTypes) {
    std::vector<LD> values = is_floating(t) ? float_values(t, 14, 6) : int_values(t, 12, 6);
    auto [av, bv] = pairs(values);
    Column a = Column::of(t, av), b = Column::of(t, bv);
    for (Op op : ops) {
      Column out = run_op(op, {a, b});
      ASSERT_EQ(out.type, DType::Bool);
      for (size_t e = 0; e < a.size(); ++e)
        EXPECT_EQ(out.get(e) != 0, compare_reference(op, a.get(e), b.get(e)))
            << ir::op_name(op) << "(" << double(a.get(e)) << ", " << double(b.get(e)) << ") : " << short_name(t);
    }
    std::vector<LD> conds;
    for (size_t e = 0; e < a.size(); ++e)
      conds.push_back(e % 3 == 0);
    Column c = Column::of(DType::Bool, conds);
    Column out = run_op(Op::Select, {c, a, b});
    for (size_t e = 0; e < a.size(); ++e) {
      LD expected = conds[e] ? a.get(e) : b.get(e);
      EXPECT_TRUE(close(t, out.get(e), expected, 0) && std::signbit(out.get(e)) == std::signbit(expected))
          << "where : " << short_name(t);
    }
  }
}

TEST(CpuEvaluator, LogicOnBool) {
  Column a = Column::of(DType::Bool, {0, 0, 1, 1}), b = Column::of(DType::Bool, {0, 1, 0, 1});
  Column both = run_op(Op::And, {a, b}), either = run_op(Op::Or, {a, b}), no = run_op(Op::Not, {a});
  for (size_t e = 0; e < 4; ++e) {
    EXPECT_EQ(both.get(e), LD(e == 3));
    EXPECT_EQ(either.get(e), LD(e != 0));
    EXPECT_EQ(no.get(e), LD(e < 2));
  }
  // Non-bool operands of logical operations mean != 0 (NaN is true).
  Column x = Column::of(DType::Float32, {0.0L, -0.0L, 2.0L, NAN});
  Column nx = run_op(Op::Not, {x});
  EXPECT_EQ(nx.get(0), 1);
  EXPECT_EQ(nx.get(1), 1);
  EXPECT_EQ(nx.get(2), 0);
  EXPECT_EQ(nx.get(3), 0);
}

TEST(CpuEvaluator, TranscendentalsOfIntegersComputeInFloat32) {
  Column i = Column::of(DType::Int32, {0, 1, 4, 1000000, -4});
  Column out = run_op(Op::Sqrt, {i});
  ASSERT_EQ(out.type, DType::Float32);
  EXPECT_EQ(out.get(2), 2.0L);
  EXPECT_EQ(out.get(3), 1000.0L);
  EXPECT_TRUE(std::isnan(out.get(4)));
}

/// The Cast operation between every pair of types, by hand.
LD cast_reference(DType from, DType to, LD v) {
  if (to == DType::Bool)
    return v != 0 || std::isnan(v);
  if (is_integer(to)) {
    LD lo = to == DType::UInt8 ? 0 : to == DType::Int32 ? LD(INT32_MIN) : LD(INT64_MIN);
    LD hi = to == DType::UInt8 ? 255 : to == DType::Int32 ? LD(INT32_MAX) : LD(INT64_MAX);
    if (is_floating(from)) { // truncate, saturate, NaN -> 0
      if (std::isnan(v)) return 0;
      return std::clamp(truncl(v), lo, hi);
    }
    return static_cast<LD>(wrap(to, static_cast<__int128>(static_cast<int64_t>(v))));
  }
  switch (to) {
  case DType::Float64: return static_cast<double>(v);
  case DType::Float32: return static_cast<float>(v);
  // Half precision: through float (so f64 rounds twice), then to the 16-bit type.
  case DType::Float16: return float(half(static_cast<float>(v)));
  case DType::BFloat16: return float(bfloat16(static_cast<float>(v)));
  default: return 0;
  }
}

TEST(CpuEvaluator, CastsBetweenEveryPairOfTypes) {
  for (DType from : AllDTypes) {
    std::vector<LD> values = is_floating(from) ? float_values(from, 40, 7, -1e6, 1e6) : int_values(from, 40, 7);
    if (is_floating(from))
      for (LD v : {1e10L, -1e10L, 255.5L, 256.0L, -0.7L, 2147483520.0L, 65519.0L, 65520.0L, 3.4e38L})
        values.push_back(v);
    Column a = Column::of(from, values);
    for (DType to : AllDTypes) {
      Column out = run_op(Op::Cast, {a}, to);
      ASSERT_EQ(out.type, to);
      for (size_t e = 0; e < a.size(); ++e) {
        LD expected = cast_reference(from, to, a.get(e));
        EXPECT_TRUE(close(to, out.get(e), expected, 0))
            << short_name(from) << " " << double(a.get(e)) << " -> " << short_name(to) << " = "
            << double(out.get(e)) << ", expected " << double(expected);
      }
    }
  }
}

TEST(CpuEvaluator, HalfPrecisionRoundsOnlyWhenStoredOrCast) {
  // (a * b) / b in f16: the product overflows f16 but not the float it is
  // computed in, so the quotient comes back; a cast to f16 in between rounds.
  ir::Program p;
  auto a = p.add_input("a", DType::Float16);
  auto b = p.add_input("b", DType::Float16);
  auto prod = p.add(Op::Mul, {a, b});
  p.add_output("kept", DType::Float16, p.add(Op::Div, {prod, b}));
  p.add_output("rounded", DType::Float16, p.add(Op::Div, {p.add_cast(DType::Float16, prod), b}));
  Column ca = Column::of(DType::Float16, {1000.0L}), cb = Column::of(DType::Float16, {1000.0L});
  Column kept = Column::of(DType::Float16, {0}), rounded = Column::of(DType::Float16, {0});
  codegen::evaluate(ir::optimize(p), {ca.data(), cb.data()}, {kept.data(), rounded.data()}, {}, 1);
  EXPECT_EQ(kept.get(0), 1000.0L);
  EXPECT_TRUE(std::isinf(rounded.get(0)));
}

TEST(CpuEvaluator, ScalarsAreConvertedToTheirParameterType) {
  ir::Program p;
  auto h = p.add_input("h", DType::Float16);
  auto s = p.add_scalar("s0", DType::Float64, true); // becomes f16: the value rounds to half
  p.add_output("o", DType::Float32, p.add_cast(DType::Float32, p.add(Op::Mul, {h, s})));
  ir::Program opt = ir::optimize(p);
  ASSERT_EQ(opt.scalars()[0].type, DType::Float16);
  Column ch = Column::of(DType::Float16, {1.0L});
  Column o = Column::of(DType::Float32, {0});
  codegen::evaluate(opt, {ch.data()}, {o.data()}, {ir::Constant::of_float(DType::Float64, 0.1)}, 1);
  EXPECT_EQ(o.get(0), LD(float(half(0.1f))));

  // The launcher's argument bytes hold the same value.
  float arg = 0;
  ASSERT_EQ(codegen::scalar_argument_size(DType::Float16), sizeof(float));
  codegen::write_scalar_argument(ir::Constant::of_float(DType::Float64, 0.1), DType::Float16, &arg);
  EXPECT_EQ(arg, float(half(0.1f)));
  bool flag = false;
  codegen::write_scalar_argument(ir::Constant::of_int(DType::Int32, 5), DType::Bool, &flag);
  EXPECT_TRUE(flag);
}

TEST(CpuEvaluator, ManyChunksAndThreadsInPlace) {
  // 2^20 + 3 elements take the threaded path and end in a partial chunk; the
  // output is the input array itself.
  const size_t n = (size_t(1) << 20) + 3;
  ir::Program p = ir::optimize(saxpy_sin());
  std::vector<float> x(n), y(n);
  for (size_t e = 0; e < n; ++e) {
    x[e] = static_cast<float>(e % 1000) * 0.01f;
    y[e] = static_cast<float>(e % 777) * 0.003f;
  }
  std::vector<float> expected(n);
  for (size_t e = 0; e < n; ++e)
    expected[e] = 2.0f * x[e] + std::sin(y[e]);
  codegen::evaluate(p, {x.data(), y.data()}, {x.data()}, {ir::Constant::of_float(DType::Float32, 2.0)}, n);
  for (size_t e : {size_t(0), size_t(1023), size_t(1024), n / 2, n - 4, n - 1})
    EXPECT_EQ(x[e], expected[e]) << "element " << e;
  EXPECT_EQ(x, expected);
}

TEST(CpuEvaluator, CallsHostImplementations) {
  ir::Program p = ir::optimize(user_function());
  std::vector<float> x = {1, 2, -3}, y = {4, 5, 6}, out(3);
  codegen::evaluate(p, {x.data(), y.data()}, {out.data()}, {ir::Constant::of_float(DType::Float32, 0.5)}, 3);
  EXPECT_EQ(out, (std::vector<float>{9, 16.5f, 27}));
}

TEST(CpuEvaluator, HalfPrecisionFunctionArgumentsAreRounded) {
  ir::Program p;
  ir::UserFunction fn;
  fn.name = "twice";
  fn.result = DType::Float16;
  fn.params = {{"v", DType::Float16}};
  fn.body = "return 2 * v;";
  fn.host = [](const void* const* args, void* result) {
    half v;
    std::memcpy(&v, args[0], 2);
    half r(2.0f * float(v));
    std::memcpy(result, &r, 2);
  };
  uint32_t f = p.add_function(fn);
  auto x = p.add_input("x", DType::Float32);
  p.add_output("o", DType::Float32, p.add_cast(DType::Float32, p.add_call(f, {x})));
  std::vector<float> in = {0.1f}, out(1);
  codegen::evaluate(ir::optimize(p), {in.data()}, {out.data()}, {}, 1);
  EXPECT_EQ(out[0], 2.0f * float(half(0.1f)));
}

TEST(CpuEvaluator, ReportsMisuse) {
  ir::Program p = ir::optimize(saxpy_sin());
  std::vector<float> x(4), out(4);
  try {
    codegen::evaluate(p, {x.data()}, {out.data()}, {ir::Constant::of_float(DType::Float32, 1)}, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "the program takes 2 input arrays, but 1 were given");
  }
  EXPECT_THROW(codegen::evaluate(p, {x.data(), x.data()}, {out.data()}, {}, 4), Error);

  ir::Program q = user_function();
  ir::UserFunction fn = q.functions()[0];
  fn.host = nullptr;
  ir::Program r;
  uint32_t f = r.add_function(fn);
  r.add_output("o", DType::Float32, r.add_call(f, {r.add_input("x", DType::Float32)}));
  try {
    codegen::evaluate(ir::optimize(r), {x.data()}, {out.data()}, {}, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unavailable);
    EXPECT_NE(std::string(e.what()).find("'sqr'"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace gpukit::test
