// The Lowerer behind lower() (dsl/text/lower.hpp): private to the text
// front end, shared by its three parts: lower_names.cpp (declarations,
// names, statements), lower.cpp (expressions) and lower_reduction.cpp
// (reductions and the statements that contain them).
#pragma once

#include "codegen/dtype.hpp"
#include "codegen/reduction.hpp"
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
/// How many expression nodes a statement with reductions may lower again
/// by reading other statements' values.
inline constexpr size_t kMaxInlinedNodes = size_t(1) << 16;
/// How deep the values it reads may nest.
inline constexpr size_t kMaxInlinedDepth = 4096;

/// A lowered expression: its node, its type as the C++ DSL would compute it,
/// and the array whose shape it has (-1: made of scalars only).
struct Value {
  ir::NodeId node = 0;
  ExprType type{DType::Float32, true};
  int shape = -1;
  /// One value per group of the statement's reduction (a reduction's value,
  /// or one combined with scalars and operands of the result's shape);
  /// `shape` is then the result's shape.
  bool group = false;
};

/// The statement with reductions being lowered: the plan it builds and what
/// its checks need.
struct ReductionBuild {
  ir::ReductionPlan plan;
  /// The whole expression, reading reduction k as the scalar r<k>.
  ir::Program top;
  /// The literal slot s<k> the next literal (or axis) takes.
  unsigned next_literal = 0;
  /// Per program being built (the top, then one per reduction argument
  /// being lowered, innermost last): its input and scalar nodes by name.
  std::vector<std::map<std::string, ir::NodeId>> nodes;
  /// Kernel parameter names: taken ones, and each symbol's.
  std::set<std::string> kernel_names;
  std::map<std::string, std::string> kernel_name_of;
  /// Inputs in the order first read: kernel name and symbol.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<LoweredReduction::Scalar> scalars;
  /// Every read of an array: for the shape checks once the scope is known.
  struct Read {
    int array;
    Offset offset;
    bool in_reduction; ///< inside a reduction's argument
    std::string name;
  };
  std::vector<Read> reads;

  // Set by the first reduction met.
  int main = -1;         ///< Lowerer::Arrays index of the reduced shape
  std::optional<int> axis;
  std::string first_text;
  int reduced = -1, reduced_keep = -1; ///< the result's shape, without and with keepdims
  bool keepdims = false;
  /// > 0 while a reduction's argument is lowered.
  unsigned depth = 0;
  /// Expression nodes lowered again by reading other statements' values:
  /// bounded, since each read repeats them (a chain of `let b = a + a`
  /// doubles at every step).
  size_t inlined = 0;
  /// The statement's own read being lowered again (errors point at it).
  unsigned inline_depth = 0;
  const Expr* inline_origin = nullptr;
  /// The depth of the expressions being lowered again, nested (it bounds
  /// the lowering's stack as the parser's depth limit does).
  size_t nested_depth = 0;
  /// A `let` checked on its own: the rules that depend on the statement's
  /// scope are left to the statements that read it.
  bool checking_let = false;
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
  /// The assignment, and whether it has been lowered (or, for a value with
  /// reductions, checked): a statement with reductions re-lowers it.
  const Assignment* assignment = nullptr;
  bool done = false;
  /// Its value contains a reduction.
  bool reduces = false;
  /// Read by a statement with reductions.
  bool read_by_reduction = false;
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
  /// A shape that is no array of the program (a reduction's result): it
  /// takes no place among the arrays' random seeds.
  int add_shape(ArrayInfo info);
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

  // Reductions (lower_reduction.cpp).
  bool is_reduction_call(const Expr& e) const;
  bool contains_reduction(const Expr& e) const;
  Value lower_reduction_call(const Expr& e, const FunctionInfo& f);
  Value lower_composite(const Expr& e, const FunctionInfo& f);
  Value reduction_name(const Expr& e, Symbol& s);
  Value reduction_literal(const Expr& e);
  /// make_op's rule when an operand is one value per group.
  std::optional<Value> combine_groups(llvm::ArrayRef<const Expr*> exprs, llvm::ArrayRef<Value> args,
                                      Offset at, std::string_view what);
  std::string reduction_kernel_name(const std::string& name, bool scalar);
  void lower_reduction_statement(const Assignment& a);
  /// Whether `array` is [cols] of `main_shape`: read per column of each row.
  bool is_cols_of(int array, int main_shape) const;

  // Statements.
  void lower_assignment(const Assignment& a);
  void finish();

  std::vector<std::string_view> known_value_names() const;

  const ParsedProgram& Parsed;
  const LowerOptions& Options;
  const SourceFile& Src;
  LoweredProgram Out;
  /// Where nodes go: the elementwise kernel, or a program of Red's plan.
  ir::Program* Prog = &Out.program;
  /// The statement with reductions being lowered, or null.
  ReductionBuild* Red = nullptr;
  /// Per LoweredProgram::reductions: the symbols of its inputs, by kernel name.
  std::vector<std::vector<std::pair<std::string, std::string>>> ReductionInputs;

  std::map<std::string, Symbol> Symbols;
  std::map<std::string, int64_t> Sizes;
  std::set<std::string> SizeNames;
  std::vector<ArrayInfo> Arrays;
  unsigned ShapeOnlyArrays = 0;
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
