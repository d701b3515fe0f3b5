#include "codegen/ir.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::ir {

std::string_view op_name(Op op) {
  switch (op) {
#define GPUKIT_IR_OP_NAME(name, text, arity)                                                       \
  case Op::name:                                                                                   \
    return text;
    GPUKIT_IR_OPS(GPUKIT_IR_OP_NAME)
#undef GPUKIT_IR_OP_NAME
  }
  return "?";
}

int op_arity(Op op) {
  switch (op) {
#define GPUKIT_IR_OP_ARITY(name, text, arity)                                                      \
  case Op::name:                                                                                   \
    return arity;
    GPUKIT_IR_OPS(GPUKIT_IR_OP_ARITY)
#undef GPUKIT_IR_OP_ARITY
  }
  return 0;
}

bool is_predicate(Op op) {
  switch (op) {
  case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne:
  case Op::And: case Op::Or: case Op::Not:
    return true;
  default:
    return false;
  }
}

bool is_transcendental(Op op) {
  switch (op) {
  case Op::Sqrt: case Op::Rsqrt: case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2:
  case Op::Log10: case Op::Sin: case Op::Cos: case Op::Tan: case Op::Tanh: case Op::Sigmoid:
  case Op::Erf: case Op::Pow:
    return true;
  default:
    return false;
  }
}

NodeId Program::append(Node node) {
  for (NodeId a : node.args)
    if (a >= Nodes.size())
      throw Error(ErrorKind::Internal,
                  fmt::format("IR: {} refers to node %{} before it exists", op_name(node.op), a));
  Nodes.push_back(std::move(node));
  return static_cast<NodeId>(Nodes.size() - 1);
}

Program Program::without_nodes() const {
  Program p;
  p.Inputs = Inputs;
  p.Scalars = Scalars;
  p.Outputs = Outputs;
  p.Functions = Functions;
  p.label = label;
  return p;
}

NodeId Program::add_input(std::string name, DType type) {
  Node n{Op::Input, type, true, static_cast<uint32_t>(Inputs.size()), {}, {}};
  Inputs.push_back({std::move(name), type});
  return append(std::move(n));
}

NodeId Program::add_scalar(std::string name, DType type, bool weak) {
  Node n{Op::Scalar, type, true, static_cast<uint32_t>(Scalars.size()), {}, {}};
  Scalars.push_back({std::move(name), type, weak});
  return append(std::move(n));
}

NodeId Program::add_constant(Constant value) {
  return append(Node{Op::Const, value.type, true, 0, value, {}});
}

NodeId Program::add(Op op, llvm::ArrayRef<NodeId> args) {
  int arity = op_arity(op);
  if (arity <= 0 || op == Op::Cast || static_cast<size_t>(arity) != args.size())
    throw Error(ErrorKind::Internal,
                fmt::format("IR: {} takes {} operands, given {}", op_name(op), arity, args.size()));
  Node n{op, DType::Float32, false, 0, {}, {}};
  n.args.assign(args.begin(), args.end());
  return append(std::move(n));
}

NodeId Program::add_cast(DType to, NodeId value) {
  Node n{Op::Cast, to, true, 0, {}, {value}};
  return append(std::move(n));
}

uint32_t Program::add_function(UserFunction fn) {
  for (size_t k = 0; k < Functions.size(); ++k) {
    if (Functions[k].name != fn.name)
      continue;
    if (Functions[k].body != fn.body)
      throw Error(ErrorKind::Usage,
                  fmt::format("two different device functions are named '{}'", fn.name));
    return static_cast<uint32_t>(k);
  }
  Functions.push_back(std::move(fn));
  return static_cast<uint32_t>(Functions.size() - 1);
}

NodeId Program::add_call(uint32_t function, llvm::ArrayRef<NodeId> args) {
  if (function >= Functions.size())
    throw Error(ErrorKind::Internal, fmt::format("IR: call of unknown function #{}", function));
  const UserFunction& fn = Functions[function];
  if (fn.params.size() != args.size())
    throw Error(ErrorKind::Usage, fmt::format("device function '{}' takes {} arguments, given {}",
                                              fn.name, fn.params.size(), args.size()));
  Node n{Op::Call, fn.result, true, function, {}, {}};
  n.args.assign(args.begin(), args.end());
  return append(std::move(n));
}

void Program::add_output(std::string name, DType type, NodeId value) {
  if (value >= Nodes.size())
    throw Error(ErrorKind::Internal, fmt::format("IR: output '{}' refers to missing node", name));
  Outputs.push_back({std::move(name), type, value});
}

} // namespace gpukit::ir
