#include "dsl/expr_printer.hpp"

#include <fmt/format.h>

#include <llvm/Support/ErrorHandling.h>

namespace gpukit::detail {

// C++ precedences, higher binds tighter.
static constexpr int kPrefixPrecedence = 15;
static constexpr int kAtomPrecedence = 20;

// The operators the DSL writes infix (or prefix), with their C++
// precedence (higher binds tighter). Everything else prints as a call. A
// table rather than a switch, since most operations are not in it.
struct OperatorSpelling {
  ir::Op op;
  int precedence;
  std::string_view text;
};
static constexpr OperatorSpelling kOperators[] = {
    {ir::Op::Mul, 13, "*"}, {ir::Op::Div, 13, "/"},  {ir::Op::Mod, 13, "%"},
    {ir::Op::Add, 12, "+"}, {ir::Op::Sub, 12, "-"},  {ir::Op::Lt, 10, "<"},
    {ir::Op::Le, 10, "<="}, {ir::Op::Gt, 10, ">"},   {ir::Op::Ge, 10, ">="},
    {ir::Op::Eq, 9, "=="},  {ir::Op::Ne, 9, "!="},   {ir::Op::And, 5, "&&"},
    {ir::Op::Or, 4, "||"},  {ir::Op::Neg, 15, "-"},  {ir::Op::Not, 15, "!"},
};

static const OperatorSpelling* find_operator(ir::Op op) {
  for (const OperatorSpelling& o : kOperators)
    if (o.op == op)
      return &o;
  return nullptr;
}

static int infix_precedence(ir::Op op) {
  const OperatorSpelling* o = find_operator(op);
  return o ? o->precedence : kAtomPrecedence;
}

std::string_view ExprPrinter::infix_spelling(ir::Op op) {
  const OperatorSpelling* o = find_operator(op);
  return o ? o->text : std::string_view();
}

std::string_view ExprPrinter::function_name(ir::Op op) {
  // The IR's names are the DSL's function names (where, sqrt, min, ...).
  return ir::op_name(op);
}

std::string_view ExprPrinter::cpp_name(DType type) {
  switch (type) {
  case DType::Bool: return "bool";
  case DType::UInt8: return "uint8_t";
  case DType::Int32: return "int32_t";
  case DType::Int64: return "int64_t";
  case DType::Float16: return "half";
  case DType::BFloat16: return "bfloat16";
  case DType::Float32: return "float";
  case DType::Float64: return "double";
  }
  llvm_unreachable("unknown DType");
}

std::string format_scalar(const ir::Constant& value) {
  switch (value.type) {
  case DType::Bool: return value.i ? "true" : "false";
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: return fmt::format("{}", value.i);
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32: return fmt::format("{}", static_cast<float>(value.f));
  case DType::Float64: return fmt::format("{}", value.f);
  }
  llvm_unreachable("unknown DType");
}

void ExprPrinter::open(int precedence) {
  bool parens = precedence < Required;
  Frames.push_back({parens, Required, precedence});
  if (parens)
    Out += '(';
}

void ExprPrinter::close() {
  Frame f = Frames.pop_back_val();
  Required = f.saved_required;
  if (f.parenthesised)
    Out += ')';
}

void ExprPrinter::array_leaf() {
  Out += NextLeaf < LeafNames.size() ? LeafNames[NextLeaf] : std::string("?");
  ++NextLeaf;
}

void ExprPrinter::scalar_leaf() {
  if (NextScalar < Scalars.size()) {
    std::string s = format_scalar(Scalars[NextScalar]);
    // A negative literal on the right of a binary operator reads as `x - -2`,
    // which is valid C++; after a prefix operator it needs parentheses.
    if (s.starts_with('-') && Required >= kPrefixPrecedence)
      s = "(" + s + ")";
    Out += s;
  } else {
    Out += '?';
  }
  ++NextScalar;
}

void ExprPrinter::begin_infix(ir::Op op) {
  int p = infix_precedence(op);
  open(p);
  Required = p;
}

void ExprPrinter::between_infix(ir::Op op) {
  Out += fmt::format(" {} ", infix_spelling(op));
  // Operators are left-associative: an equal-precedence right operand needs
  // parentheses, `a - (b - c)`.
  Required = Frames.back().precedence + 1;
}

void ExprPrinter::end_infix() { close(); }

void ExprPrinter::begin_prefix(ir::Op op) {
  open(kPrefixPrecedence);
  Out += infix_spelling(op);
  Required = kPrefixPrecedence;
}

void ExprPrinter::end_prefix() { close(); }

void ExprPrinter::begin_call(std::string_view name) {
  open(kAtomPrecedence);
  Out += name;
  Out += '(';
  Required = 0;
}

void ExprPrinter::next_argument() {
  Out += ", ";
  Required = 0;
}

void ExprPrinter::end_call() {
  Out += ')';
  close();
}

} // namespace gpukit::detail
