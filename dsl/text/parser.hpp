// parse_program: turns the text of a .gk program into its syntax tree
// (dsl/text/ast.hpp), or throws gpukit::Error{Parse} whose message is
// `file:line:col: error: ...`, the offending line and a caret.
//
//   ParsedProgram p = parse_program("out = 2*x + sin(y)", "-e");
//   ir::Program ir = lower(p, bindings).program;          // dsl/text/lower.hpp
//
// The language (lower.hpp gives its semantics):
//   # a comment; `//` starts one too
//   x: f32[N]                  an input array; N is bound with --size N=...
//   m: bf16[R, C]              a 2-D input
//   p: f32[N] ~ uniform(5, 30) random values from [5, 30) unless a file is given
//   r: f32 = 0.02              a scalar parameter (--scalar r=... overrides)
//   let t = x * r              a local value
//   out = where(t > 0, t, 0)   an output; statements end at a newline or `;`
// Operators, loosest first: `?:`, `||`, `&&`, `== !=`, `< <= > >=`, `+ -`,
// `* / %`, prefix `- + !`, `**` (right-associative, so -x**2 == -(x**2)).
// Only the grammar lives here: names, types and shapes are checked by lower().
#pragma once

#include "dsl/text/ast.hpp"

#include <string_view>

namespace gpukit::text {

/// Parentheses and brackets may nest this deep; deeper input is rejected
/// (it would only come from a generator, and it bounds the parser's stack).
inline constexpr unsigned kMaxNesting = 64;
/// Expression trees may be this deep (a chain `x+x+...` is as deep as it is long).
inline constexpr unsigned kMaxExprDepth = 512;

ParsedProgram parse_program(std::string_view text, std::string_view filename);

/// Parses a single expression (no statements), e.g. for tests and --scalar values.
Expr parse_expression(std::string_view text, std::string_view filename);

} // namespace gpukit::text
