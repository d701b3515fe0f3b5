#include "codegen/cuda_expression.hpp"

#include "codegen/element_semantics.hpp"
#include "codegen/passes/dead_code.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/ErrorHandling.h>

#include <cctype>
#include <cmath>

namespace gpukit::codegen {

using ir::Node;
using ir::NodeId;
using ir::Op;

// --- Types and names ----------------------------------------------------------------

std::string_view cuda_compute_type(DType t) {
  switch (t) {
  case DType::Bool: return "bool";
  case DType::UInt8: return "unsigned char";
  case DType::Int32: return "int";
  case DType::Int64: return "long long";
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32: return "float";
  case DType::Float64: return "double";
  }
  llvm_unreachable("unknown DType");
}

std::string_view cuda_storage_type(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::UInt8: return "unsigned char";
  case DType::Int32: return "int";
  case DType::Int64: return "long long";
  case DType::Float16:
  case DType::BFloat16: return "unsigned short";
  case DType::Float32: return "float";
  case DType::Float64: return "double";
  }
  llvm_unreachable("unknown DType");
}

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return llvm::all_of(name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

namespace {

/// Names a parameter must not take: C++ keywords, CUDA's built-in variables,
/// the kernel's own locals and every function an emitted kernel may call.
bool is_reserved(std::string_view name) {
  static const char* const Words[] = {
      // C++ keywords and literals likely to be chosen as names
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
      "const", "constexpr", "continue", "decltype", "default", "delete", "do", "double", "else",
      "enum", "explicit", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private",
      "protected", "public", "register", "return", "short", "signed", "sizeof", "static",
      "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "while", "and", "or", "not",
      "xor", "bitand", "bitor", "compl",
      // CUDA built-ins
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
      // the kernel's locals
      "i", "i0", "n", "n_packs", "p", "p0", "j", "k",
      // functions emitted kernels call
      "min", "max", "abs", "llabs", "fabs", "fabsf", "fmin", "fminf", "fmax", "fmaxf", "fma",
      "fmaf", "fmod", "fmodf", "pow", "powf", "sqrt", "sqrtf", "rsqrt", "rsqrtf", "exp", "expf",
      "exp2", "exp2f", "log", "logf", "log2", "log2f", "log10", "log10f", "sin", "sinf", "cos",
      "cosf", "tan", "tanf", "tanh", "tanhf", "erf", "erff", "floor", "floorf", "ceil", "ceilf",
      "round", "roundf"};
  for (const char* w : Words)
    if (name == w)
      return true;
  // Prefixes and shapes the generator uses for its own names.
  if (name.starts_with("gk_") || name.starts_with("_") || name.ends_with("_p") || name.ends_with("_v"))
    return true;
  if (name.size() > 1 && name[0] == 't' && llvm::all_of(name.substr(1), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return true;
  return false;
}

} // namespace

CudaNames::CudaNames(const ir::Program& p) {
  llvm::StringSet<> taken;
  auto pick = [&](const std::string& wanted, std::string fallback) {
    if (is_identifier(wanted) && !is_reserved(wanted) && taken.insert(wanted).second)
      return wanted;
    return fallback; // gk_ names are reserved, so they cannot clash with a user's
  };
  for (size_t k = 0; k < p.inputs().size(); ++k)
    Inputs.push_back(pick(p.inputs()[k].name, fmt::format("gk_in{}", k)));
  for (size_t k = 0; k < p.outputs().size(); ++k)
    Outputs.push_back(pick(p.outputs()[k].name, fmt::format("gk_out{}", k)));
  for (size_t k = 0; k < p.scalars().size(); ++k)
    Scalars.push_back(pick(p.scalars()[k].name, fmt::format("gk_s{}", k)));
}

// --- Expressions -------------------------------------------------------------------

namespace {

/// C++ operator precedence, higher binds tighter.
enum Prec : int {
  PrecCond = 2,
  PrecOr = 4,
  PrecAnd = 5,
  PrecEq = 9,
  PrecRel = 10,
  PrecAdd = 12,
  PrecMul = 13,
  PrecUnary = 15,
  PrecPrimary = 17,
};

/// A C++ expression and what the generator needs to know to place it.
struct Expr {
  std::string text;
  int prec = PrecPrimary;
  bool call = false; ///< calls a function: worth a temporary of its own
  bool leaf = false; ///< a name, literal or load: cheap to repeat
};

std::string paren(const Expr& e, int min_prec) {
  return e.prec >= min_prec ? e.text : fmt::format("({})", e.text);
}

Expr leaf(std::string text, int prec = PrecPrimary) { return {std::move(text), prec, false, true}; }

Expr binary(const Expr& a, std::string_view op, const Expr& b, int prec) {
  return {fmt::format("{} {} {}", paren(a, prec), op, paren(b, prec + 1)), prec, a.call || b.call, false};
}

Expr prefix(std::string_view op, const Expr& a) {
  return {fmt::format("{}{}", op, paren(a, PrecUnary + 1)), PrecUnary, a.call, false};
}

Expr call(std::string_view fn, std::initializer_list<const Expr*> args) {
  std::string text = fmt::format("{}(", fn);
  bool first = true;
  for (const Expr* a : args) {
    text += fmt::format("{}{}", first ? "" : ", ", a->text);
    first = false;
  }
  text += ')';
  return {std::move(text), PrecPrimary, true, false};
}

/// `(T)e` for bool and unsigned char results: C++ computes on them in int.
Expr narrow(DType t, const Expr& e) {
  if (t != DType::Bool && t != DType::UInt8)
    return e;
  return {fmt::format("({}){}", cuda_compute_type(t), paren(e, PrecPrimary)), PrecUnary, e.call, false};
}

/// A float (or double) name of a math function: "sinf" or "sin".
std::string math(std::string_view name, DType t) {
  return t == DType::Float64 ? std::string(name) : fmt::format("{}f", name);
}

template <typename F> Expr float_literal(F v) {
  constexpr bool is_double = std::is_same_v<F, double>;
  std::string_view suffix = is_double ? "" : "f";
  if (std::isnan(v))
    return leaf(is_double ? "__longlong_as_double(0x7fffffffffffffffLL)" : "__int_as_float(0x7fffffff)");
  if (std::isinf(v)) {
    std::string inf = is_double ? "__longlong_as_double(0x7ff0000000000000LL)" : "__int_as_float(0x7f800000)";
    return v > 0 ? leaf(inf) : leaf("-" + inf, PrecUnary);
  }
  std::string text = fmt::format("{}", v); // shortest text that reads back exactly
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return leaf(text + std::string(suffix), text[0] == '-' ? PrecUnary : PrecPrimary);
}

Expr literal(const ir::Constant& c, DType t) {
  switch (t) {
  case DType::Bool: return leaf(sem::constant_value<bool>(c) ? "true" : "false");
  case DType::UInt8: return leaf(fmt::format("(unsigned char){}", sem::constant_value<uint8_t>(c)), PrecUnary);
  case DType::Int32: {
    int32_t v = sem::constant_value<int32_t>(c);
    if (v == INT32_MIN)
      return leaf("(-2147483647 - 1)");
    return leaf(fmt::format("{}", v), v < 0 ? PrecUnary : PrecPrimary);
  }
  case DType::Int64: {
    int64_t v = sem::constant_value<int64_t>(c);
    if (v == INT64_MIN)
      return leaf("(-9223372036854775807LL - 1)");
    return leaf(fmt::format("{}LL", v), v < 0 ? PrecUnary : PrecPrimary);
  }
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32: return float_literal(sem::constant_value<float>(c));
  case DType::Float64: return float_literal(sem::constant_value<double>(c));
  }
  llvm_unreachable("unknown DType");
}

/// The zero a value of `t` is compared with to make a bool ("0.0f", "0LL", "0").
Expr zero_of(DType t) {
  DType literal_type = t == DType::Bool || t == DType::UInt8 ? DType::Int32 : t; // C++ compares them as int
  return literal(ir::Constant::of_int(DType::Int64, 0), literal_type);
}

/// Expression generation for one node at a time; see ElementCodegen.
class ExprBuilder {
public:
  ExprBuilder(const ir::Program& p, const CudaNames& names, CudaHelpers& helpers)
      : P(p), Names(names), Helpers(helpers) {}

  Expr node(const Node& n, llvm::ArrayRef<Expr> a, const ElementCodegen::Load& load);
  Expr cast(DType from, DType to, const Expr& a);
  /// The storage value of `v` (of type t) for a store.
  std::string store(DType t, const Expr& v);

private:
  Expr round_half(DType t, const Expr& v); // v: a float; t: f16 or bf16
  Expr int_division(Op op, DType t, const Expr& a, const Expr& b);

  const ir::Program& P;
  const CudaNames& Names;
  CudaHelpers& Helpers;
};

Expr ExprBuilder::round_half(DType t, const Expr& v) {
  if (t == DType::Float16) {
    Helpers.use(Helper::F16ToF32);
    Helpers.use(Helper::F32ToF16);
    return {fmt::format("gk_f16_to_f32(gk_f32_to_f16({}))", v.text), PrecPrimary, true, false};
  }
  Helpers.use(Helper::BF16ToF32);
  Helpers.use(Helper::F32ToBF16);
  return {fmt::format("gk_bf16_to_f32(gk_f32_to_bf16({}))", v.text), PrecPrimary, true, false};
}

Expr ExprBuilder::cast(DType from, DType to, const Expr& a) {
  std::string_view from_c = cuda_compute_type(from), to_c = cuda_compute_type(to);
  switch (to) {
  case DType::Bool:
    if (from == DType::Bool)
      return a;
    return binary(a, "!=", zero_of(from), PrecEq);
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: {
    if (from == to)
      return a;
    if (!is_floating(from))
      return {fmt::format("({}){}", to_c, paren(a, PrecUnary + 1)), PrecUnary, a.call, false};
    // Saturating, NaN -> 0 (a C++ cast is undefined out of range).
    bool f64 = from == DType::Float64;
    Helper h = to == DType::UInt8 ? (f64 ? Helper::F64ToU8 : Helper::F32ToU8)
               : to == DType::Int32 ? (f64 ? Helper::F64ToI32 : Helper::F32ToI32)
                                    : (f64 ? Helper::F64ToI64 : Helper::F32ToI64);
    Helpers.use(h);
    return call(fmt::format("gk_{}_to_{}", f64 ? "f64" : "f32", short_name(to)), {&a});
  }
  case DType::Float32:
  case DType::Float64:
    if (from_c == to_c)
      return a; // f16 and bf16 values already compute in float
    return {fmt::format("({}){}", to_c, paren(a, PrecUnary + 1)), PrecUnary, a.call, false};
  case DType::Float16:
  case DType::BFloat16: {
    Expr as_float = from_c == "float" ? a : cast(from, DType::Float32, a);
    return round_half(to, as_float);
  }
  }
  llvm_unreachable("unknown DType");
}

Expr ExprBuilder::int_division(Op op, DType t, const Expr& a, const Expr& b) {
  bool div = op == Op::Div;
  switch (t) {
  case DType::Bool: return div ? binary(a, "&&", b, PrecAnd) : leaf("false");
  case DType::UInt8: Helpers.use(div ? Helper::DivU8 : Helper::ModU8); return call(div ? "gk_div_u8" : "gk_mod_u8", {&a, &b});
  case DType::Int32: Helpers.use(div ? Helper::DivI32 : Helper::ModI32); return call(div ? "gk_div_i32" : "gk_mod_i32", {&a, &b});
  case DType::Int64: Helpers.use(div ? Helper::DivI64 : Helper::ModI64); return call(div ? "gk_div_i64" : "gk_mod_i64", {&a, &b});
  case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Float64: break;
  }
  llvm_unreachable("integer division of a floating type");
}

std::string ExprBuilder::store(DType t, const Expr& v) {
  switch (t) {
  case DType::Float16: Helpers.use(Helper::F32ToF16); return fmt::format("gk_f32_to_f16({})", v.text);
  case DType::BFloat16: Helpers.use(Helper::F32ToBF16); return fmt::format("gk_f32_to_bf16({})", v.text);
  case DType::Bool: case DType::UInt8: case DType::Int32: case DType::Int64: case DType::Float32:
  case DType::Float64: return v.text; // bool converts to 0 or 1
  }
  llvm_unreachable("unknown DType");
}

Expr ExprBuilder::node(const Node& n, llvm::ArrayRef<Expr> a, const ElementCodegen::Load& load) {
  DType t = n.type;
  bool floating = is_floating(t);
  auto unary_math = [&](std::string_view name) { return call(math(name, t), {&a[0]}); };
  auto binary_math = [&](std::string_view name) { return call(math(name, t), {&a[0], &a[1]}); };
  switch (n.op) {
  case Op::Input: {
    std::string s = load(n.index);
    switch (t) {
    case DType::Bool: // a comparison: cheap, but worth a temporary when used twice
      return {fmt::format("({} != 0)", s), PrecPrimary, false, false};
    case DType::Float16: Helpers.use(Helper::F16ToF32); return {fmt::format("gk_f16_to_f32({})", s), PrecPrimary, true, false};
    case DType::BFloat16: Helpers.use(Helper::BF16ToF32); return {fmt::format("gk_bf16_to_f32({})", s), PrecPrimary, true, false};
    case DType::UInt8: case DType::Int32: case DType::Int64: case DType::Float32: case DType::Float64: return leaf(s);
    }
    llvm_unreachable("unknown DType");
  }
  case Op::Scalar: return leaf(Names.scalar(n.index));
  case Op::Const: return literal(n.value, t);
  case Op::Cast: return cast(P.node(n.args[0]).type, t, a[0]);
  case Op::Call: {
    const ir::UserFunction& fn = P.functions()[n.index];
    Helpers.use_function(n.index);
    std::string args;
    for (size_t k = 0; k < a.size(); ++k) {
      // Half-precision parameters see their value rounded, as the host function does.
      DType pt = fn.params[k].type;
      args += fmt::format("{}{}", k ? ", " : "", is_half_precision(pt) ? round_half(pt, a[k]).text : a[k].text);
    }
    Expr result{fmt::format("gk_fn_{}({})", fn.name, args), PrecPrimary, true, false};
    return is_half_precision(t) ? round_half(t, result) : result;
  }
  case Op::Neg:
    if (t == DType::Bool)
      return a[0];
    return narrow(t, prefix("-", a[0]));
  case Op::Not: return prefix("!", a[0]);
  case Op::Abs:
    switch (t) {
    case DType::Bool: case DType::UInt8: return a[0];
    case DType::Int32: return call("abs", {&a[0]});
    case DType::Int64: return call("llabs", {&a[0]});
    case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Float64: return unary_math("fabs");
    }
    llvm_unreachable("unknown DType");
  case Op::Sqrt: return unary_math("sqrt");
  case Op::Rsqrt: return unary_math("rsqrt");
  case Op::Exp: return unary_math("exp");
  case Op::Exp2: return unary_math("exp2");
  case Op::Log: return unary_math("log");
  case Op::Log2: return unary_math("log2");
  case Op::Log10: return unary_math("log10");
  case Op::Sin: return unary_math("sin");
  case Op::Cos: return unary_math("cos");
  case Op::Tan: return unary_math("tan");
  case Op::Tanh: return unary_math("tanh");
  case Op::Erf: return unary_math("erf");
  case Op::Sigmoid: {
    std::string one = t == DType::Float64 ? "1.0" : "1.0f";
    return {fmt::format("{0} / ({0} + {1}({2}))", one, math("exp", t), prefix("-", a[0]).text), PrecMul, true, false};
  }
  case Op::Floor: return floating ? unary_math("floor") : a[0];
  case Op::Ceil: return floating ? unary_math("ceil") : a[0];
  case Op::Round: return floating ? unary_math("round") : a[0];
  case Op::Add: return narrow(t, binary(a[0], "+", a[1], PrecAdd));
  case Op::Sub: return narrow(t, binary(a[0], "-", a[1], PrecAdd));
  case Op::Mul: return narrow(t, binary(a[0], "*", a[1], PrecMul));
  case Op::Div: return floating ? binary(a[0], "/", a[1], PrecMul) : int_division(n.op, t, a[0], a[1]);
  case Op::Mod: return floating ? binary_math("fmod") : int_division(n.op, t, a[0], a[1]);
  case Op::Min: return floating ? binary_math("fmin") : narrow(t, call("min", {&a[0], &a[1]}));
  case Op::Max: return floating ? binary_math("fmax") : narrow(t, call("max", {&a[0], &a[1]}));
  case Op::Pow: return binary_math("pow");
  case Op::Lt: return binary(a[0], "<", a[1], PrecRel);
  case Op::Le: return binary(a[0], "<=", a[1], PrecRel);
  case Op::Gt: return binary(a[0], ">", a[1], PrecRel);
  case Op::Ge: return binary(a[0], ">=", a[1], PrecRel);
  case Op::Eq: return binary(a[0], "==", a[1], PrecEq);
  case Op::Ne: return binary(a[0], "!=", a[1], PrecEq);
  case Op::And: return binary(a[0], "&&", a[1], PrecAnd);
  case Op::Or: return binary(a[0], "||", a[1], PrecOr);
  case Op::Fma:
    if (floating)
      return call(math("fma", t), {&a[0], &a[1], &a[2]});
    return narrow(t, binary(binary(a[0], "*", a[1], PrecMul), "+", a[2], PrecAdd));
  case Op::Clamp: {
    if (floating) {
      Expr lower = call(math("fmax", t), {&a[0], &a[1]});
      return call(math("fmin", t), {&lower, &a[2]});
    }
    Expr lower = call("max", {&a[0], &a[1]});
    return narrow(t, call("min", {&lower, &a[2]}));
  }
  case Op::Select:
    return {fmt::format("{} ? {} : {}", paren(a[0], PrecOr), paren(a[1], PrecCond + 1), paren(a[2], PrecCond + 1)),
            PrecCond, a[0].call || a[1].call || a[2].call, false};
  }
  llvm_unreachable("unknown ir::Op");
}

} // namespace

// --- One element ------------------------------------------------------------------

ElementCodegen::ElementCodegen(const ir::Program& p, const CudaNames& names, CudaHelpers& helpers)
    : P(p), Names(names), Helpers(helpers), Live(ir::live_nodes(p)), Uses(p.nodes().size(), 0),
      OutputUses(p.nodes().size(), 0), InputUsed(p.inputs().size(), false) {
  for (size_t id = 0; id < p.nodes().size(); ++id) {
    if (!Live[id])
      continue;
    const Node& n = p.nodes()[id];
    for (NodeId a : n.args)
      ++Uses[a];
    if (n.op == Op::Input)
      InputUsed[n.index] = true;
  }
  for (const ir::Output& o : p.outputs()) {
    ++Uses[o.value];
    ++OutputUses[o.value];
  }
}

void ElementCodegen::emit(SourceWriter& w, const Load& load, const Store& store) {
  ExprBuilder builder(P, Names, Helpers);
  std::vector<Expr> values(P.nodes().size());
  unsigned temps = 0;
  for (size_t id = 0; id < P.nodes().size(); ++id) {
    if (!Live[id])
      continue;
    const Node& n = P.nodes()[id];
    llvm::SmallVector<Expr, 3> args;
    for (NodeId a : n.args)
      args.push_back(values[a]);
    // A cast to f16/bf16 that only outputs of that type read needs no
    // rounding of its own: the store rounds (and rounding twice is the same).
    bool rounded_by_store = n.op == Op::Cast && is_half_precision(n.type) && Uses[id] == OutputUses[id];
    Expr e = rounded_by_store ? builder.cast(P.node(n.args[0]).type, DType::Float32, args[0])
                              : builder.node(n, args, load);
    // Calls and shared values get a temporary; long inline expressions too,
    // so that every statement stays readable.
    bool temporary = !e.leaf && (e.call || Uses[id] > 1 || e.text.size() > 72);
    if (temporary) {
      std::string name = fmt::format("t{}", temps++);
      w.line("const {} {} = {};", cuda_compute_type(n.type), name, e.text);
      e = leaf(name);
    }
    values[id] = std::move(e);
  }
  for (size_t k = 0; k < P.outputs().size(); ++k) {
    const ir::Output& o = P.outputs()[k];
    w.line("{} = {};", store(k), builder.store(o.type, values[o.value]));
  }
}

} // namespace gpukit::codegen
