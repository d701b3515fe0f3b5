#include "codegen/passes/constant_fold.hpp"

#include "codegen/element_semantics.hpp"
#include "codegen/passes/type_infer.hpp"

#include <llvm/Support/ErrorHandling.h>

#include <cmath>
#include <optional>

namespace gpukit::ir {

namespace sem = codegen::sem;

namespace {

/// The value of `op` applied to literal operands, or nothing when `op` is not
/// folded (calls).
std::optional<Constant> fold_operation(const Program& p, const Node& n) {
  llvm::SmallVector<Constant, 3> args;
  for (NodeId a : n.args)
    args.push_back(p.node(a).value);

  if (n.op == Op::Cast)
    return sem::cast_constant(args[0], n.type);
  if (n.op == Op::Call)
    return std::nullopt;

  return sem::with_operation(n.op, [&](auto shape) -> std::optional<Constant> {
    using Shape = decltype(shape);
    if constexpr (std::is_same_v<Shape, sem::NotElementwise>) {
      llvm_unreachable("leaves, casts and calls are handled above");
    } else if constexpr (sem::is_compare_v<Shape>) {
      return sem::with_compute_type(args[0].type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        bool r = shape.fn(sem::constant_value<T>(args[0]), sem::constant_value<T>(args[1]));
        return sem::make_constant<bool>(DType::Bool, r);
      });
    } else {
      return sem::with_compute_type(n.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto v = [&](size_t k) { return sem::constant_value<T>(args[k]); };
        T r;
        if constexpr (sem::is_unary_v<Shape>)
          r = shape.fn(v(0));
        else if constexpr (sem::is_binary_v<Shape>)
          r = shape.fn(v(0), v(1));
        else if constexpr (sem::is_ternary_v<Shape>)
          r = shape.fn(v(0), v(1), v(2));
        else
          r = shape.fn(sem::constant_value<bool>(args[0]), v(1), v(2));
        return sem::make_constant<T>(n.type, r);
      });
    }
  });
}

/// Whether node `id` is the literal `value` (compared as its compute type).
/// For floats the sign of zero matters: is_literal(x, -0.0) is false for +0.0.
bool is_literal(const Program& p, NodeId id, double value) {
  const Node& n = p.node(id);
  if (n.op != Op::Const)
    return false;
  return sem::with_compute_type(n.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = sem::constant_value<T>(n.value);
    if constexpr (sem::is_float_v<T>)
      return v == static_cast<T>(value) && std::signbit(v) == std::signbit(value);
    else
      return v == sem::convert<T>(value);
  });
}

/// Whether a value of half-precision type `t` is already rounded to `t`.
bool is_rounded(const Program& p, NodeId id, DType t) {
  const Node& n = p.node(id);
  return n.type == t && (n.op == Op::Input || n.op == Op::Scalar || n.op == Op::Cast);
}

/// The node an exact simplification of `n` reduces to, if any.
std::optional<NodeId> simplify(const Program& p, const Node& n) {
  bool floating = is_floating(n.type);
  auto arg = [&](size_t k) { return n.args[k]; };
  switch (n.op) {
  case Op::Mul:
    if (is_literal(p, arg(1), 1)) return arg(0);
    if (is_literal(p, arg(0), 1)) return arg(1);
    return std::nullopt;
  case Op::Div:
    if (is_literal(p, arg(1), 1)) return arg(0);
    return std::nullopt;
  case Op::Add: {
    double zero = floating ? -0.0 : 0.0; // x + (+0.0) turns -0.0 into +0.0
    if (is_literal(p, arg(1), zero)) return arg(0);
    if (is_literal(p, arg(0), zero)) return arg(1);
    return std::nullopt;
  }
  case Op::Sub:
    if (is_literal(p, arg(1), 0.0)) return arg(0);
    return std::nullopt;
  case Op::Neg:
  case Op::Not:
    if (p.node(arg(0)).op == n.op) return p.node(arg(0)).args[0];
    return std::nullopt;
  case Op::Cast: {
    const Node& v = p.node(arg(0));
    if (v.type != n.type) return std::nullopt;
    if (!is_half_precision(n.type) || is_rounded(p, arg(0), n.type)) return arg(0);
    return std::nullopt;
  }
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
    if (!floating) return arg(0);
    return std::nullopt;
  case Op::Abs:
    if (n.type == DType::Bool || n.type == DType::UInt8) return arg(0);
    return std::nullopt;
  case Op::Select:
    if (arg(1) == arg(2)) return arg(1);
    if (p.node(arg(0)).op == Op::Const) return p.node(arg(0)).value.i ? arg(1) : arg(2);
    return std::nullopt;
  case Op::Input: case Op::Scalar: case Op::Const: case Op::Call: case Op::Sqrt: case Op::Rsqrt:
  case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2: case Op::Log10: case Op::Sin:
  case Op::Cos: case Op::Tan: case Op::Tanh: case Op::Sigmoid: case Op::Erf: case Op::Mod:
  case Op::Min: case Op::Max: case Op::Pow: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
  case Op::Eq: case Op::Ne: case Op::And: case Op::Or: case Op::Fma: case Op::Clamp:
    return std::nullopt;
  }
  llvm_unreachable("unknown ir::Op");
}

/// Literal results whatever the operands: x - x == 0 for integers and bool
/// (not floats: inf - inf is NaN), and a % b on bool (x % 1 == x % 0 == 0).
std::optional<Constant> fold_known_result(const Node& n) {
  if (n.op == Op::Sub && !is_floating(n.type) && n.args[0] == n.args[1])
    return Constant::of_int(n.type, 0);
  if (n.op == Op::Mod && n.type == DType::Bool)
    return Constant::of_int(DType::Bool, 0);
  return std::nullopt;
}

} // namespace

Program fold_constants(const Program& p) {
  verify_types(p);
  Program out = p.without_nodes();
  std::vector<NodeId> map;
  map.reserve(p.nodes().size());
  for (const Node& original : p.nodes()) {
    Node n = original;
    for (NodeId& a : n.args)
      a = map[a];

    bool all_literal = !n.args.empty() && llvm::all_of(n.args, [&](NodeId a) {
      return out.node(a).op == Op::Const;
    });
    std::optional<Constant> folded = all_literal ? fold_operation(out, n) : fold_known_result(n);
    if (folded) {
      map.push_back(out.add_constant(*folded));
      continue;
    }
    if (std::optional<NodeId> same = simplify(out, n)) {
      map.push_back(*same);
      continue;
    }
    map.push_back(out.append(std::move(n)));
  }
  for (Output& o : out.mutable_outputs())
    o.value = map[o.value];
  return out;
}

} // namespace gpukit::ir
