// The GPUkit IR: a small, typed dataflow graph that sits between the
// front ends (the C++ expression templates in dsl/ and the text language) and
// the back ends (codegen/cuda_emitter and codegen/cpu_evaluator).
//
//   ir::Program p;
//   NodeId x = p.add_input("x", DType::Float32);
//   NodeId s = p.add_scalar("s0", DType::Float32, /*weak=*/true);
//   p.add_output("out", DType::Float32, p.add(Op::Add, {p.add(Op::Mul, {s, x}), p.add(Op::Sin, {x})}));
//   p = infer_types(p);   // then fold_constants, eliminate_common_subexpressions
//
// A Program is one elementwise kernel: every node computes one value per
// element index. Nodes live in a vector in topological order (an argument
// always precedes its user), so passes are single forward sweeps and the
// printed form, the structural hash and the emitted source are deterministic.
//
// Kernel parameter order, shared by every back end and the launcher:
//   inputs (in add_input order), outputs (in add_output order),
//   scalars (in add_scalar order), then the element count.
#pragma once

#include "codegen/dtype.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::ir {

/// Every operation, with its text-language name and its operand count
/// (-1: variable). The CUDA emitter, the CPU evaluator, the printer and the
/// passes switch over Op without a default, so -Wswitch lists every place a
/// new operation must be handled.
#define GPUKIT_IR_OPS(X)                                                                          \
  /* leaves */                                                                                    \
  X(Input, "input", 0)     /* element i of array operand `index` */                              \
  X(Scalar, "scalar", 0)   /* kernel argument `index`, passed by value */                        \
  X(Const, "const", 0)     /* a literal `value` */                                               \
  /* conversion and user functions */                                                            \
  X(Cast, "cast", 1)       /* convert to the node's type */                                      \
  X(Call, "call", -1)      /* user device function `index` */                                    \
  /* unary */                                                                                     \
  X(Neg, "neg", 1)                                                                                \
  X(Not, "not", 1)                                                                                \
  X(Abs, "abs", 1)                                                                                \
  X(Sqrt, "sqrt", 1)                                                                              \
  X(Rsqrt, "rsqrt", 1)                                                                            \
  X(Exp, "exp", 1)                                                                                \
  X(Exp2, "exp2", 1)                                                                              \
  X(Log, "log", 1)                                                                                \
  X(Log2, "log2", 1)                                                                              \
  X(Log10, "log10", 1)                                                                            \
  X(Sin, "sin", 1)                                                                                \
  X(Cos, "cos", 1)                                                                                \
  X(Tan, "tan", 1)                                                                                \
  X(Tanh, "tanh", 1)                                                                              \
  X(Sigmoid, "sigmoid", 1)                                                                        \
  X(Erf, "erf", 1)                                                                                \
  X(Floor, "floor", 1)                                                                            \
  X(Ceil, "ceil", 1)                                                                              \
  X(Round, "round", 1)     /* half away from zero, like C's round() */                           \
  /* binary */                                                                                    \
  X(Add, "add", 2)                                                                                \
  X(Sub, "sub", 2)                                                                                \
  X(Mul, "mul", 2)                                                                                \
  X(Div, "div", 2)         /* integers: truncating; x / 0 == 0 */                                \
  X(Mod, "mod", 2)         /* C++ semantics (sign of the dividend); floats: fmod; x % 0 == 0 */  \
  X(Min, "min", 2)                                                                                \
  X(Max, "max", 2)                                                                                \
  X(Pow, "pow", 2)                                                                                \
  X(Lt, "lt", 2)                                                                                  \
  X(Le, "le", 2)                                                                                  \
  X(Gt, "gt", 2)                                                                                  \
  X(Ge, "ge", 2)                                                                                  \
  X(Eq, "eq", 2)                                                                                  \
  X(Ne, "ne", 2)                                                                                  \
  X(And, "and", 2)         /* logical */                                                         \
  X(Or, "or", 2)           /* logical */                                                         \
  /* ternary */                                                                                   \
  X(Fma, "fma", 3)         /* a * b + c, rounded once */                                         \
  X(Clamp, "clamp", 3)     /* min(max(x, lo), hi) */                                             \
  X(Select, "where", 3)    /* cond ? a : b */

enum class Op : uint8_t {
#define GPUKIT_IR_OP_ENUM(name, text, arity) name,
  GPUKIT_IR_OPS(GPUKIT_IR_OP_ENUM)
#undef GPUKIT_IR_OP_ENUM
};

/// The text-language name of an operation ("add", "sin", "where").
std::string_view op_name(Op op);
/// The number of operands `op` takes, or -1 for Call.
int op_arity(Op op);
/// Comparisons and logical operations produce bool.
bool is_predicate(Op op);
/// Functions that compute in a floating type (sin, exp, sqrt, pow, ...).
bool is_transcendental(Op op);

using NodeId = uint32_t;

/// A literal: integers and bools in `i`, floating values in `f`.
struct Constant {
  DType type = DType::Float32;
  int64_t i = 0;
  double f = 0.0;

  static Constant of_int(DType type, int64_t v) { return {type, v, static_cast<double>(v)}; }
  static Constant of_float(DType type, double v) {
    // The integer view of NaN, infinities and out-of-range values is 0: the
    // plain cast would be undefined behaviour.
    bool fits = v > -9.2233720368547758e18 && v < 9.2233720368547758e18;
    return {type, fits ? static_cast<int64_t>(v) : 0, v};
  }
  bool operator==(const Constant&) const = default;
};

struct Node {
  Op op;
  /// The result type. Leaves are typed when added; infer_types sets the rest.
  DType type = DType::Float32;
  bool typed = false;
  /// Input: operand number; Scalar: argument number; Call: function number.
  uint32_t index = 0;
  Constant value;
  llvm::SmallVector<NodeId, 3> args;
};

/// An array read or written element-wise by the kernel.
struct Operand {
  std::string name;
  DType type;
};

/// A C++ scalar passed by value. `weak` scalars adapt to the array's type
/// (NEP 50); infer_types may change a weak scalar's type to the one it is used
/// at, and the caller converts the value before launching.
struct ScalarParam {
  std::string name;
  DType type;
  bool weak = true;
};

struct Output {
  std::string name;
  DType type;
  NodeId value;
};

/// A user's CUDA device function, registered once and called by name:
/// `body` is the text between the braces, the parameters are named
/// `params[k].name`. `host` computes the same function for the CPU
/// evaluator: it reads one value per parameter (each of its param's type)
/// and writes the result (of type `result`); it is not part of the hash.
struct UserFunction {
  using HostImpl = std::function<void(const void* const* args, void* result)>;
  std::string name;
  DType result;
  std::vector<Operand> params;
  std::string body;
  HostImpl host;
};

class Program {
public:
  NodeId add_input(std::string name, DType type);
  NodeId add_scalar(std::string name, DType type, bool weak = true);
  NodeId add_constant(Constant value);
  /// An operation of fixed arity; the result type is left to infer_types.
  NodeId add(Op op, llvm::ArrayRef<NodeId> args);
  NodeId add_cast(DType to, NodeId value);
  /// Registers a user function (once per name) and returns its number.
  uint32_t add_function(UserFunction fn);
  NodeId add_call(uint32_t function, llvm::ArrayRef<NodeId> args);
  void add_output(std::string name, DType type, NodeId value);

  /// Appends a fully formed node (used by passes that rebuild a program).
  NodeId append(Node node);

  /// This program's inputs, scalars, outputs, functions and label with no
  /// nodes: a pass appends the rewritten nodes, then re-points the outputs
  /// (mutable_outputs()) at them.
  Program without_nodes() const;

  llvm::ArrayRef<Node> nodes() const { return Nodes; }
  const Node& node(NodeId id) const { return Nodes[id]; }
  Node& node(NodeId id) { return Nodes[id]; }
  llvm::ArrayRef<Operand> inputs() const { return Inputs; }
  llvm::ArrayRef<ScalarParam> scalars() const { return Scalars; }
  llvm::ArrayRef<Output> outputs() const { return Outputs; }
  llvm::ArrayRef<UserFunction> functions() const { return Functions; }
  std::vector<ScalarParam>& mutable_scalars() { return Scalars; }
  std::vector<Output>& mutable_outputs() { return Outputs; }

  /// The user's source text and where it came from, e.g.
  /// "out = 2 * x + sin(y)  (examples/saxpy.cpp:18)". Goes into comments only;
  /// it is not part of the structural hash.
  std::string label;

private:
  std::vector<Node> Nodes;
  std::vector<Operand> Inputs;
  std::vector<ScalarParam> Scalars;
  std::vector<Output> Outputs;
  std::vector<UserFunction> Functions;
};

} // namespace gpukit::ir
