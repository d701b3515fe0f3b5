// The syntax tree of a GPUkit text program (.gk), as the parser builds it and
// before any name is resolved. format_program() prints it back in canonical
// form (single spaces, minimal parentheses), which parses to the same tree.
//
//   ParsedProgram p = parse_program("x: f32[N]\nout = 2 * x", "a.gk");
//   std::string canonical = format_program(p);   // "x: f32[N]\nout = 2 * x\n"
//
// Every node keeps the byte offset of where it starts in the source, so the
// lowering can point at it in an error message.
#pragma once

#include "codegen/dtype.hpp"
#include "dsl/text/source.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gpukit::text {

enum class ExprKind : uint8_t {
  Number,  ///< an int or float literal, inf or nan
  Bool,    ///< true or false
  Name,    ///< a variable, input, scalar or named constant
  Unary,   ///< `op` applied to args[0]: "-", "+", "!"
  Binary,  ///< args[0] `op` args[1]: "+", "**", "<=", "&&", ...
  Ternary, ///< args[0] ? args[1] : args[2]
  Call,    ///< `name`(args...), a function, reduction or cast
};

struct Expr {
  ExprKind kind = ExprKind::Number;
  /// Where the expression starts; for Unary/Binary/Ternary, where its operator is.
  Offset offset = 0;
  /// Name: the identifier; Call: the function; Unary/Binary: the operator.
  std::string name;
  /// Number: the literal as written (kept for messages and printing).
  std::string spelling;
  bool is_float = false; ///< Number: written with '.', an exponent, inf or nan
  int64_t int_value = 0; ///< Number (integer) and Bool
  double float_value = 0; ///< Number
  std::vector<Expr> args;
  /// Call: the keyword of each argument ("axis" in `sum(x, axis=1)`), "" when positional.
  std::vector<std::string> keywords;
  /// The depth of the tree below this node (1 for a leaf); the parser bounds it.
  uint32_t depth = 1;

  bool operator==(const Expr& o) const {
    return kind == o.kind && name == o.name && is_float == o.is_float &&
           int_value == o.int_value &&
           (float_value == o.float_value || (float_value != float_value && o.float_value != o.float_value)) &&
           args == o.args && keywords == o.keywords;
  }
};

/// One dimension of a declared shape: a symbol bound on the command line (`N`)
/// or a literal extent.
struct Dim {
  std::string symbol; ///< empty for a literal extent
  int64_t extent = 0;
  Offset offset = 0;
  bool operator==(const Dim& o) const { return symbol == o.symbol && extent == o.extent; }
};

/// `x: f32[N]` (an array), `r: f32` or `r: f32 = 0.02` (a scalar parameter).
/// An array may say the range its random values are drawn from when no file
/// is given for it: `price: f32[N] ~ uniform(5, 30)`.
struct Declaration {
  std::string name;
  Offset offset = 0;
  DType dtype = DType::Float32;
  bool is_array = false;
  std::vector<Dim> shape;
  std::optional<Expr> initial; ///< scalars only: a literal, maybe negated
  std::vector<Expr> uniform;   ///< arrays only: {lo, hi} literals, or empty
  bool operator==(const Declaration& o) const {
    return name == o.name && dtype == o.dtype && is_array == o.is_array && shape == o.shape &&
           initial == o.initial && uniform == o.uniform;
  }
};

/// `out = expr` (an output) or `let t = expr` (a local value, not written out).
struct Assignment {
  std::string name;
  Offset offset = 0;
  bool local = false;
  Expr value;
  bool operator==(const Assignment& o) const {
    return name == o.name && local == o.local && value == o.value;
  }
};

using Statement = std::variant<Declaration, Assignment>;

struct ParsedProgram {
  SourceFile source;
  std::vector<Statement> statements;
};

/// The expression in canonical form: `2 * x + sin(y)`.
std::string format_expr(const Expr& e);
/// One line per statement, in canonical form.
std::string format_statement(const Statement& s);
std::string format_program(const ParsedProgram& p);

/// Binding strength of a binary operator (higher binds tighter); 0 if unknown.
int binary_precedence(std::string_view op);
/// `**` groups to the right; every other binary operator to the left.
bool is_right_associative(std::string_view op);
/// Binding strength of prefix operators: above `*`, below `**` (so -x**2 == -(x**2)).
inline constexpr int kUnaryPrecedence = 8;

} // namespace gpukit::text
