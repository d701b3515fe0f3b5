#include "codegen/ir_printer.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/xxhash.h>

namespace gpukit::ir {

namespace {

std::string type_text(const Node& n) { return n.typed ? std::string(short_name(n.type)) : "?"; }

/// The operands (and, for leaves, the attribute) of a node, after its op name.
std::string operands_text(const Program& p, const Node& n) {
  switch (n.op) {
  case Op::Input: return p.inputs()[n.index].name;
  case Op::Scalar: return p.scalars()[n.index].name;
  case Op::Const: return print_constant(n.value);
  case Op::Call: {
    std::string args;
    for (size_t k = 0; k < n.args.size(); ++k)
      args += fmt::format("{}%{}", k ? ", " : "", n.args[k]);
    return fmt::format("{}({})", p.functions()[n.index].name, args);
  }
  case Op::Cast: case Op::Neg: case Op::Not: case Op::Abs: case Op::Sqrt: case Op::Rsqrt:
  case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2: case Op::Log10: case Op::Sin:
  case Op::Cos: case Op::Tan: case Op::Tanh: case Op::Sigmoid: case Op::Erf: case Op::Floor:
  case Op::Ceil: case Op::Round: case Op::Add: case Op::Sub: case Op::Mul: case Op::Div:
  case Op::Mod: case Op::Min: case Op::Max: case Op::Pow: case Op::Lt: case Op::Le: case Op::Gt:
  case Op::Ge: case Op::Eq: case Op::Ne: case Op::And: case Op::Or: case Op::Fma: case Op::Clamp:
  case Op::Select: {
    std::string args;
    for (size_t k = 0; k < n.args.size(); ++k)
      args += fmt::format("{}%{}", k ? ", " : "", n.args[k]);
    return args;
  }
  }
  llvm_unreachable("unknown ir::Op");
}

std::string print_body(const Program& p) {
  std::string out;
  for (const UserFunction& fn : p.functions()) {
    std::string params;
    for (size_t k = 0; k < fn.params.size(); ++k)
      params += fmt::format("{}{}: {}", k ? ", " : "", fn.params[k].name, short_name(fn.params[k].type));
    out += fmt::format("fn {}({}) -> {}\n", fn.name, params, short_name(fn.result));
  }

  std::string params;
  for (size_t k = 0; k < p.inputs().size(); ++k)
    params += fmt::format("{}{}: {}[]", k ? ", " : "", p.inputs()[k].name, short_name(p.inputs()[k].type));
  for (size_t k = 0; k < p.scalars().size(); ++k) {
    const ScalarParam& s = p.scalars()[k];
    params += fmt::format("{}{}: {}{}", k ? ", " : "; ", s.name, short_name(s.type), s.weak ? " weak" : "");
  }
  std::string results;
  for (size_t k = 0; k < p.outputs().size(); ++k)
    results += fmt::format("{}{}: {}[]", k ? ", " : "", p.outputs()[k].name, short_name(p.outputs()[k].type));
  out += fmt::format("kernel({}) -> ({})\n", params, results);

  for (size_t id = 0; id < p.nodes().size(); ++id) {
    const Node& n = p.nodes()[id];
    out += fmt::format("  %{} = {} {} : {}\n", id, op_name(n.op), operands_text(p, n), type_text(n));
  }
  for (const Output& o : p.outputs())
    out += fmt::format("  {} = %{}\n", o.name, o.value);
  return out;
}

} // namespace

std::string print_constant(const Constant& c) {
  switch (c.type) {
  case DType::Bool: return c.i ? "true" : "false";
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: return fmt::format("{}", c.i);
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32: return fmt::format("{}", static_cast<float>(c.f));
  case DType::Float64: return fmt::format("{}", c.f);
  }
  llvm_unreachable("unknown DType");
}

std::string print(const Program& p) {
  std::string label;
  if (!p.label.empty()) {
    std::string one_line = p.label;
    for (char& ch : one_line)
      if (ch == '\n' || ch == '\r')
        ch = ' ';
    label = fmt::format("# {}\n", one_line);
  }
  return label + print_body(p);
}

uint64_t structural_hash(const Program& p) {
  std::string text = print_body(p);
  for (const UserFunction& fn : p.functions())
    text += fmt::format("\nfn {} {{{}}}", fn.name, fn.body);
  return llvm::xxHash64(text);
}

} // namespace gpukit::ir
