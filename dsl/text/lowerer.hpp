// The Lowerer behind lower() (dsl/text/lower.hpp): private to the text
// front end, shared by its two halves: lower_names.cpp (declarations,
// names, statements) and lower.cpp (expressions).
#pragma once

#include "codegen/dtype.hpp"
#include "codegen/type_rules.hpp"
#include "dsl/ir_builder.hpp"
#include "dsl/text/lower.hpp"
#include "dsl/text/names.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpukit::text::detail_lower {

// A value's type is typed as the C++ DSL types it at compile time, by the
// same rules (codegen/type_rules.hpp); literals are weak.
using gpukit::apply_rule;
using gpukit::ExprType;
using gpukit::promote_all;

/// The name an undeclared one-liner input's size goes by.
inline constexpr std::string_view kImplicitSize = "N";
inline constexpr unsigned kMaxRank = 4;

/// A lowered expression: its node, its type as the C++ DSL would compute it,
/// and the array whose shape it has (-1: made of scalars only).
struct Value {
  ir::NodeId node = 0;
  ExprType type{DType::Float32, true};
  int shape = -1;
};

struct Symbol {
  enum class Kind { Array, Scalar, Assigned } kind = Kind::Array;
  Offset offset = 0;
  // Array: its index in Lowerer::Arrays and, once read, its input node.
  int array = -1;
  std::optional<ir::NodeId> input;
  // Scalar: its type, value and, once read, its parameter node.
  DType dtype = DType::Float32;
  std::optional<ir::Constant> value;
  std::optional<ir::NodeId> scalar;
  // Assigned (and Array declarations that are assigned): set once the
  // assignment has been lowered.
  bool assigned_later = false;
  Offset assignment_offset = 0;
  std::optional<Value> result;
};

inline std::optional<ir::Op> binary_op(std::string_view op) {
  if (op == "+") return ir::Op::Add;
  if (op == "-") return ir::Op::Sub;
  if (op == "*") return ir::Op::Mul;
  if (op == "/") return ir::Op::Div;
  if (op == "%") return ir::Op::Mod;
  if (op == "**") return ir::Op::Pow;
  if (op == "<") return ir::Op::Lt;
  if (op == "<=") return ir::Op::Le;
  if (op == ">") return ir::Op::Gt;
  if (op == ">=") return ir::Op::Ge;
  if (op == "==") return ir::Op::Eq;
  if (op == "!=") return ir::Op::Ne;
  if (op == "&&") return ir::Op::And;
  if (op == "||") return ir::Op::Or;
  return std::nullopt;
}

inline std::string join_names(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

class Lowerer {
public:
  Lowerer(const ParsedProgram& parsed, const LowerOptions& options)
      : Parsed(parsed), Options(options), Src(parsed.source), Sizes(options.sizes) {}

  LoweredProgram run();

private:
  // Declarations and names.
  void declare_all();
  void declare(const Declaration& d);
  void collect_assignments();
  void check_value_name(const std::string& name, Offset offset, std::string_view what);
  void bind_from_spec(ArrayInfo& info, const ArraySpec& spec, Offset offset, bool implicit);
  int add_array(ArrayInfo info);
  void resolve_extents(ArrayInfo& info);

  // Expressions.
  Value lower_expr(const Expr& e);
  Value lower_name(const Expr& e);
  Value lower_literal(const Expr& e);
  Value lower_call(const Expr& e);
  Value lower_cast(const Expr& e, DType to);
  /// `what` names the operation in messages: "'+'", "where()".
  Value make_op(ir::Op op, llvm::ArrayRef<const Expr*> exprs, llvm::ArrayRef<Value> args, Offset at,
                std::string_view what);
  int merge_shapes(llvm::ArrayRef<const Expr*> exprs, llvm::ArrayRef<Value> args, Offset at,
                   std::string_view what);
  bool same_shape(int a, int b) const;
  /// The shape two operands broadcast to by NumPy rules (an existing array
  /// when it is one of them), nullopt when they do not broadcast.
  std::optional<int> broadcast_shapes(int a, int b);
  std::string describe_operand(const Expr& e, const Value& v) const;
  [[noreturn]] void reduction_unavailable(const Expr& e, const FunctionInfo& f);

  // Statements.
  void lower_assignment(const Assignment& a);
  void finish();

  std::vector<std::string_view> known_value_names() const;

  const ParsedProgram& Parsed;
  const LowerOptions& Options;
  const SourceFile& Src;
  LoweredProgram Out;
  ir::Program& Prog = Out.program;

  std::map<std::string, Symbol> Symbols;
  std::map<std::string, int64_t> Sizes;
  std::set<std::string> SizeNames;
  std::vector<ArrayInfo> Arrays;
  bool Strict = false;
  unsigned NextLiteral = 0;
  /// The literals lowered so far that others may share (shares_scalar_slot).
  std::vector<std::pair<ir::Constant, ir::NodeId>> Literals;
  int ProgramShape = -1;
  std::string FirstOutputName;
  std::set<std::string> UsedScalarOptions, UsedInputOptions;
  std::string Label;
  Offset LabelOffset = 0;
  /// Kernel parameter names: outputs', decided before any input's.
  std::set<std::string> OutputKernelNames;
  std::set<std::string> InputKernelNames;
  std::string output_kernel_name(const std::string& name) const;
  std::string input_kernel_name(const std::string& name);
};

} // namespace gpukit::text::detail_lower
