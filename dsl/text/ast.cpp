#include "dsl/text/ast.hpp"

#include <fmt/format.h>

namespace gpukit::text {

namespace {

constexpr int kTernaryPrecedence = 1;
constexpr int kPrimaryPrecedence = 10;

int precedence_of(const Expr& e) {
  switch (e.kind) {
  case ExprKind::Number:
    // A negative literal prints with its sign, so it binds like a prefix minus.
    return e.spelling.starts_with("-") ? kUnaryPrecedence : kPrimaryPrecedence;
  case ExprKind::Bool:
  case ExprKind::Name:
  case ExprKind::Call: return kPrimaryPrecedence;
  case ExprKind::Unary: return kUnaryPrecedence;
  case ExprKind::Binary: return binary_precedence(e.name);
  case ExprKind::Ternary: return kTernaryPrecedence;
  }
  return kPrimaryPrecedence;
}

void format_into(std::string& out, const Expr& e, int context);

void format_operand(std::string& out, const Expr& e, int context) {
  if (precedence_of(e) < context) {
    out += '(';
    format_into(out, e, 0);
    out += ')';
    return;
  }
  format_into(out, e, context);
}

std::string number_spelling(const Expr& e) {
  if (!e.spelling.empty())
    return e.spelling;
  if (!e.is_float)
    return fmt::format("{}", e.int_value);
  if (e.float_value != e.float_value)
    return "nan";
  if (e.float_value == std::numeric_limits<double>::infinity())
    return "inf";
  if (e.float_value == -std::numeric_limits<double>::infinity())
    return "-inf";
  std::string s = fmt::format("{}", e.float_value);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

void format_into(std::string& out, const Expr& e, int context) {
  switch (e.kind) {
  case ExprKind::Number:
    out += number_spelling(e);
    return;
  case ExprKind::Bool:
    out += e.int_value ? "true" : "false";
    return;
  case ExprKind::Name:
    out += e.name;
    return;
  case ExprKind::Call:
    out += e.name;
    out += '(';
    for (size_t k = 0; k < e.args.size(); ++k) {
      if (k)
        out += ", ";
      if (k < e.keywords.size() && !e.keywords[k].empty())
        out += e.keywords[k] + "=";
      format_into(out, e.args[k], 0);
    }
    out += ')';
    return;
  case ExprKind::Unary: {
    out += e.name;
    // "- -x" rather than "--x", and "-(-2)" stays apart from the literal -2.
    size_t mark = out.size();
    format_operand(out, e.args[0], kUnaryPrecedence);
    if (mark < out.size() && (out[mark] == '-' || out[mark] == '+') && (e.name == "-" || e.name == "+"))
      out.insert(mark, " ");
    return;
  }
  case ExprKind::Binary: {
    int p = binary_precedence(e.name);
    bool right = is_right_associative(e.name);
    // Operands of equal precedence need parentheses on the side the operator
    // does not group towards. Right of `**` a prefix operator is allowed
    // (2 ** -x); left of it even a prefix operator needs parentheses.
    int left_context = right ? p + 1 : p;
    int right_context = right ? kUnaryPrecedence : p + 1;
    format_operand(out, e.args[0], left_context);
    out += fmt::format(" {} ", e.name);
    format_operand(out, e.args[1], right_context);
    return;
  }
  case ExprKind::Ternary:
    format_operand(out, e.args[0], kTernaryPrecedence + 1);
    out += " ? ";
    format_into(out, e.args[1], 0);
    out += " : ";
    format_operand(out, e.args[2], kTernaryPrecedence);
    return;
  }
}

} // namespace

int binary_precedence(std::string_view op) {
  if (op == "||")
    return 2;
  if (op == "&&")
    return 3;
  if (op == "==" || op == "!=")
    return 4;
  if (op == "<" || op == "<=" || op == ">" || op == ">=")
    return 5;
  if (op == "+" || op == "-")
    return 6;
  if (op == "*" || op == "/" || op == "%")
    return 7;
  if (op == "**")
    return 9;
  return 0;
}

bool is_right_associative(std::string_view op) { return op == "**"; }

std::string format_expr(const Expr& e) {
  std::string out;
  format_into(out, e, 0);
  return out;
}

std::string format_statement(const Statement& s) {
  if (const auto* a = std::get_if<Assignment>(&s))
    return fmt::format("{}{} = {}", a->local ? "let " : "", a->name, format_expr(a->value));
  const auto& d = std::get<Declaration>(s);
  std::string out = fmt::format("{}: {}", d.name, short_name(d.dtype));
  if (d.is_array) {
    out += '[';
    for (size_t k = 0; k < d.shape.size(); ++k) {
      if (k)
        out += ", ";
      out += d.shape[k].symbol.empty() ? fmt::format("{}", d.shape[k].extent) : d.shape[k].symbol;
    }
    out += ']';
  }
  if (d.uniform.size() == 2)
    out += fmt::format(" ~ uniform({}, {})", format_expr(d.uniform[0]), format_expr(d.uniform[1]));
  if (d.initial)
    out += " = " + format_expr(*d.initial);
  return out;
}

std::string format_program(const ParsedProgram& p) {
  std::string out;
  for (const Statement& s : p.statements) {
    out += format_statement(s);
    out += '\n';
  }
  return out;
}

} // namespace gpukit::text
