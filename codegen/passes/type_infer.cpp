#include "codegen/passes/type_infer.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <map>
#include <optional>

namespace gpukit::ir {

namespace {

/// A value's type and whether it is weak (NEP 50): a weak scalar, a literal,
/// or computed from weak values only. A weak operand adapts to the others.
struct Typing {
  DType type;
  bool weak;
};

/// The type an operation on `operands` computes in (dtype.hpp's rules).
Typing combine(llvm::ArrayRef<Typing> operands) {
  std::optional<DType> strong;
  for (const Typing& t : operands)
    if (!t.weak)
      strong = strong ? promote(*strong, t.type) : t.type;
  if (!strong) {
    DType all = operands.front().type;
    for (const Typing& t : operands.drop_front())
      all = promote(all, t.type);
    return {all, true};
  }
  DType result = *strong;
  for (const Typing& t : operands)
    if (t.weak)
      result = promote_with_scalar(result, kind_of(t.type));
  return {result, false};
}

/// A node's result and the type each operand must have (none: any type).
struct NodeTyping {
  Typing result;
  llvm::SmallVector<std::optional<DType>, 3> operands;
};

NodeTyping type_node(const Program& p, const Node& n, llvm::ArrayRef<Typing> args) {
  auto all_as = [&](DType t) { return llvm::SmallVector<std::optional<DType>, 3>(args.size(), t); };
  switch (n.op) {
  case Op::Input: return {{p.inputs()[n.index].type, false}, {}};
  case Op::Scalar: return {{p.scalars()[n.index].type, p.scalars()[n.index].weak}, {}};
  case Op::Const: return {{n.value.type, true}, {}};
  case Op::Cast: return {{n.type, false}, {std::nullopt}};
  case Op::Call: {
    const UserFunction& fn = p.functions()[n.index];
    NodeTyping t{{fn.result, false}, {}};
    for (const Operand& param : fn.params)
      t.operands.push_back(param.type);
    return t;
  }
  case Op::Neg: case Op::Abs: case Op::Floor: case Op::Ceil: case Op::Round:
    return {args[0], all_as(args[0].type)};
  case Op::Sqrt: case Op::Rsqrt: case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2:
  case Op::Log10: case Op::Sin: case Op::Cos: case Op::Tan: case Op::Tanh: case Op::Sigmoid:
  case Op::Erf: {
    DType t = float_type_for(args[0].type);
    return {{t, args[0].weak}, all_as(t)};
  }
  case Op::Not: return {{DType::Bool, args[0].weak}, all_as(DType::Bool)};
  case Op::And:
  case Op::Or: return {{DType::Bool, args[0].weak && args[1].weak}, all_as(DType::Bool)};
  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Mod: case Op::Min:
  case Op::Max: case Op::Fma: case Op::Clamp: {
    Typing t = combine(args);
    return {t, all_as(t.type)};
  }
  case Op::Pow: {
    Typing t = combine(args);
    t.type = float_type_for(t.type);
    return {t, all_as(t.type)};
  }
  case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne: {
    Typing t = combine(args);
    return {{DType::Bool, t.weak}, all_as(t.type)};
  }
  case Op::Select: {
    Typing t = combine(args.drop_front());
    return {t, {DType::Bool, t.type, t.type}};
  }
  }
  llvm_unreachable("unknown ir::Op");
}

/// Whether every value of `narrow` is exactly a value of `wide`.
bool holds(DType wide, DType narrow) {
  if (wide == narrow || narrow == DType::Bool)
    return true;
  switch (narrow) {
  case DType::Bool: return true;
  case DType::UInt8: return wide != DType::Bool;
  case DType::Int32: return wide == DType::Int64 || wide == DType::Float64;
  case DType::Int64: return false;
  case DType::Float16:
  case DType::BFloat16: return wide == DType::Float32 || wide == DType::Float64;
  case DType::Float32: return wide == DType::Float64;
  case DType::Float64: return false;
  }
  llvm_unreachable("unknown DType");
}

/// The type a weak scalar declared `declared` takes, given the types it is
/// used at. Converting the value once to that type must give the same
/// answers as converting the declared value at each use.
DType scalar_type(DType declared, llvm::ArrayRef<DType> uses) {
  if (uses.empty())
    return declared;
  DType widest = uses.front();
  for (DType u : uses.drop_front())
    widest = promote(widest, u);
  bool all_same = llvm::all_of(uses, [&](DType u) { return u == uses.front(); });
  if (all_same || holds(widest, declared))
    return widest;
  return declared;
}

} // namespace

Program infer_types(const Program& p) {
  // Pass 1: every node's type, and the types each weak scalar is used at.
  std::vector<Typing> typing;
  std::vector<llvm::SmallVector<std::optional<DType>, 3>> required;
  std::vector<llvm::SmallVector<DType, 2>> scalar_uses(p.scalars().size());
  auto note_use = [&](NodeId value, DType at) {
    const Node& v = p.node(value);
    if (v.op != Op::Scalar || !p.scalars()[v.index].weak)
      return;
    auto& uses = scalar_uses[v.index];
    if (!llvm::is_contained(uses, at))
      uses.push_back(at);
  };
  for (const Node& n : p.nodes()) {
    llvm::SmallVector<Typing, 3> args;
    for (NodeId a : n.args)
      args.push_back(typing[a]);
    NodeTyping t = type_node(p, n, args);
    for (size_t k = 0; k < n.args.size(); ++k)
      if (t.operands[k])
        note_use(n.args[k], *t.operands[k]);
    typing.push_back(t.result);
    required.push_back(std::move(t.operands));
  }
  for (const Output& o : p.outputs())
    note_use(o.value, o.type);

  // Pass 2: rebuild with the final scalar types and explicit casts.
  Program out = p.without_nodes();
  for (size_t k = 0; k < p.scalars().size(); ++k)
    if (p.scalars()[k].weak)
      out.mutable_scalars()[k].type = scalar_type(p.scalars()[k].type, scalar_uses[k]);

  std::map<std::pair<NodeId, DType>, NodeId> casts;
  auto as_type = [&](NodeId v, DType t) {
    if (out.node(v).type == t)
      return v;
    auto [it, inserted] = casts.try_emplace({v, t}, 0);
    if (inserted)
      it->second = out.add_cast(t, v);
    return it->second;
  };

  std::vector<NodeId> map;
  map.reserve(p.nodes().size());
  for (size_t id = 0; id < p.nodes().size(); ++id) {
    Node n = p.nodes()[id];
    for (size_t k = 0; k < n.args.size(); ++k) {
      n.args[k] = map[n.args[k]];
      if (required[id][k])
        n.args[k] = as_type(n.args[k], *required[id][k]);
    }
    n.type = n.op == Op::Scalar ? out.scalars()[n.index].type : typing[id].type;
    n.typed = true;
    map.push_back(out.append(std::move(n)));
  }
  for (Output& o : out.mutable_outputs())
    o.value = as_type(map[o.value], o.type);
  return out;
}

void verify_types(const Program& p) {
  auto fail = [](std::string message) {
    throw Error(ErrorKind::Internal, "IR type check: " + message + " (run infer_types first)");
  };
  std::vector<Typing> typing;
  for (size_t id = 0; id < p.nodes().size(); ++id) {
    const Node& n = p.nodes()[id];
    if (!n.typed)
      fail(fmt::format("%{} ({}) has no type", id, op_name(n.op)));
    llvm::SmallVector<Typing, 3> args;
    for (NodeId a : n.args)
      args.push_back(typing[a]);
    NodeTyping t = type_node(p, n, args);
    if (t.result.type != n.type)
      fail(fmt::format("%{} ({}) is {} but computes {}", id, op_name(n.op), short_name(n.type),
                       short_name(t.result.type)));
    for (size_t k = 0; k < n.args.size(); ++k) {
      DType actual = p.node(n.args[k]).type;
      if (t.operands[k] && *t.operands[k] != actual)
        fail(fmt::format("operand {} of %{} ({}) is {}, expected {}", k, id, op_name(n.op),
                         short_name(actual), short_name(*t.operands[k])));
    }
    typing.push_back({n.type, t.result.weak});
  }
  for (const Output& o : p.outputs())
    if (p.node(o.value).type != o.type)
      fail(fmt::format("output '{}' is declared {} but its value is {}", o.name, short_name(o.type),
                       short_name(p.node(o.value).type)));
}

} // namespace gpukit::ir
