// The Spirit X3 grammar of the text language. It is the only translation unit
// that includes Spirit (which compiles slowly); everything it builds is the
// plain tree of dsl/text/ast.hpp.
//
// Before the grammar runs, a scan of the text (same length, so every offset
// stays valid) blanks out comments and turns newlines inside brackets into
// spaces: a newline then ends a statement exactly when no bracket is open,
// and the grammar itself needs no comment rules. The same scan bounds the
// bracket nesting, which bounds the parser's recursion.
#include "dsl/text/parser.hpp"

#include "dsl/text/names.hpp"

#include <boost/spirit/home/x3.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

// "expected ..." messages name the parser that failed; for a parser with a
// semantic action that is its subject's name, not a mangled type.
namespace boost::spirit::x3 {
template <typename Subject, typename Action> struct get_info<action<Subject, Action>> {
  using result_type = std::string;
  std::string operator()(const action<Subject, Action>& p) const { return what(p.subject); }
};
} // namespace boost::spirit::x3

namespace gpukit::text {

namespace {

namespace x3 = boost::spirit::x3;
using Iterator = const char*;

/// A problem found by a semantic action (the grammar's own failures are
/// x3::expectation_failure).
struct ActionFailure {
  const char* where;
  std::string message;
};

// The start of the text, so actions can turn iterators into offsets.
struct BaseTag;

template <typename Context> Offset offset_of(const Context& ctx, Iterator it) {
  Iterator base = x3::get<BaseTag>(ctx).get();
  return static_cast<Offset>(it - base);
}

/// Throws when `e` is deeper than kMaxExprDepth (`base`: the start of the text).
void check_depth(const Expr& e, const char* base) {
  if (e.depth > kMaxExprDepth)
    throw ActionFailure{base + e.offset, fmt::format("expression is nested more than {} levels deep; "
                                           "split it with `let` statements",
                                           kMaxExprDepth)};
}

Expr make_node(ExprKind kind, Offset offset, std::string name, std::vector<Expr> args) {
  Expr e;
  e.kind = kind;
  e.offset = offset;
  e.name = std::move(name);
  e.args = std::move(args);
  for (const Expr& a : e.args)
    e.depth = std::max(e.depth, a.depth + 1);
  return e;
}

/// `-` applied to a literal folds into it, so `-2 * x` carries the literal -2
/// (as the C++ DSL's `-2 * x` does) rather than a negation of 2.
Expr apply_prefix(char op, Offset offset, Expr operand) {
  if (op == '-' && operand.kind == ExprKind::Number) {
    operand.offset = offset;
    operand.int_value = static_cast<int64_t>(0ull - static_cast<uint64_t>(operand.int_value));
    operand.float_value = -operand.float_value;
    // (Building a new string rather than insert(0, "-") sidesteps a GCC 12
    // -Wrestrict false positive, https://gcc.gnu.org/bugzilla/show_bug.cgi?id=105329.)
    if (!operand.spelling.empty() && operand.spelling[0] == '-')
      operand.spelling = operand.spelling.substr(1);
    else
      operand.spelling = std::string("-") + operand.spelling;
    return operand;
  }
  std::vector<Expr> args;
  args.push_back(std::move(operand));
  return make_node(ExprKind::Unary, offset, std::string(1, op), std::move(args));
}

Expr make_number(std::string_view text, Offset offset, const char* where) {
  Expr e;
  e.kind = ExprKind::Number;
  e.offset = offset;
  e.spelling = std::string(text);
  e.is_float = text.find_first_of(".eE") != std::string_view::npos;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (!e.is_float) {
    auto [ptr, ec] = std::from_chars(first, last, e.int_value);
    if (ec == std::errc::result_out_of_range)
      throw ActionFailure{where, fmt::format("integer literal {} does not fit in 64 bits; "
                                             "write it as a float ({}.0)",
                                             text, text)};
    e.float_value = static_cast<double>(e.int_value);
    return e;
  }
  auto [ptr, ec] = std::from_chars(first, last, e.float_value);
  if (ec == std::errc::result_out_of_range) {
    // Overflow gives inf and underflow zero, as in C++ and Python.
    bool tiny = text.find("e-") != std::string_view::npos || text.find("E-") != std::string_view::npos;
    e.float_value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  }
  e.int_value = 0;
  return e;
}

// ---------------------------------------------------------------------------
// Semantic actions. Each works on the rule's own attribute (_val) and the
// attribute of the component it is attached to (_attr), which X3 creates
// fresh for the action, so a failed alternative leaves nothing behind.

auto assign = [](auto& ctx) { x3::_val(ctx) = std::move(x3::_attr(ctx)); };

auto begin_binary = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::string op(range.begin(), range.end());
  std::vector<Expr> args;
  args.push_back(std::move(x3::_val(ctx)));
  x3::_val(ctx) = make_node(ExprKind::Binary, offset_of(ctx, range.begin()), op, std::move(args));
};

auto push_operand = [](auto& ctx) {
  Expr& e = x3::_val(ctx);
  Expr& rhs = x3::_attr(ctx);
  e.depth = std::max(e.depth, rhs.depth + 1);
  e.args.push_back(std::move(rhs));
  check_depth(e, x3::get<BaseTag>(ctx).get());
};

auto begin_ternary = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::vector<Expr> args;
  args.push_back(std::move(x3::_val(ctx)));
  x3::_val(ctx) = make_node(ExprKind::Ternary, offset_of(ctx, range.begin()), "?", std::move(args));
};

auto on_number = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::string_view text(range.begin(), range.end() - range.begin());
  x3::_val(ctx) = make_number(text, offset_of(ctx, range.begin()), range.begin());
};

auto on_name = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::string name(range.begin(), range.end());
  Offset offset = offset_of(ctx, range.begin());
  Expr e;
  e.offset = offset;
  if (name == "true" || name == "false") {
    e.kind = ExprKind::Bool;
    e.int_value = name == "true";
    e.spelling = name;
  } else if (name == "inf" || name == "nan") {
    e.kind = ExprKind::Number;
    e.is_float = true;
    e.float_value = name == "inf" ? std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::quiet_NaN();
    e.spelling = name;
  } else {
    e.kind = ExprKind::Name;
    e.name = std::move(name);
  }
  x3::_val(ctx) = std::move(e);
};

auto begin_call = [](auto& ctx) {
  Expr& e = x3::_val(ctx);
  if (e.kind != ExprKind::Name)
    throw ActionFailure{x3::get<BaseTag>(ctx).get() + e.offset,
                        fmt::format("'{}' is a literal, not a function", e.spelling)};
  e.kind = ExprKind::Call;
};

struct Argument {
  std::string keyword;
  const char* keyword_at = nullptr;
  Expr value;
};

auto push_argument = [](auto& ctx) {
  Expr& call = x3::_val(ctx);
  Argument& arg = x3::_attr(ctx);
  for (const std::string& k : call.keywords)
    if (!arg.keyword.empty() && k == arg.keyword)
      throw ActionFailure{arg.keyword_at, fmt::format("argument '{}' is given twice", arg.keyword)};
  if (arg.keyword.empty() && !call.keywords.empty() && !call.keywords.back().empty())
    throw ActionFailure{x3::get<BaseTag>(ctx).get() + arg.value.offset,
                        "a positional argument cannot follow a keyword argument"};
  call.depth = std::max(call.depth, arg.value.depth + 1);
  call.keywords.push_back(std::move(arg.keyword));
  call.args.push_back(std::move(arg.value));
};

auto set_keyword = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  x3::_val(ctx).keyword.assign(range.begin(), range.end());
  x3::_val(ctx).keyword_at = range.begin();
};
auto set_keyword_value = [](auto& ctx) { x3::_val(ctx).value = std::move(x3::_attr(ctx)); };
auto set_positional = [](auto& ctx) {
  x3::_val(ctx).keyword.clear();
  x3::_val(ctx).value = std::move(x3::_attr(ctx));
};

/// The prefix operators and operand of `- - !x`: applied innermost first.
struct PrefixChain {
  std::vector<std::pair<char, Offset>> ops;
  Expr operand;
};

auto push_prefix = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  x3::_val(ctx).ops.emplace_back(*range.begin(), offset_of(ctx, range.begin()));
};
auto set_chain_operand = [](auto& ctx) { x3::_val(ctx).operand = std::move(x3::_attr(ctx)); };

Expr fold_prefix(PrefixChain chain, const char* base) {
  Expr e = std::move(chain.operand);
  for (auto it = chain.ops.rbegin(); it != chain.ops.rend(); ++it) {
    e = apply_prefix(it->first, it->second, std::move(e));
    check_depth(e, base);
  }
  return e;
}

auto on_unary = [](auto& ctx) {
  x3::_val(ctx) = fold_prefix(std::move(x3::_attr(ctx)), x3::get<BaseTag>(ctx).get());
};

/// `a ** -b ** c`: the operands and the prefix chains right of each `**`.
struct PowerChain {
  Expr first;
  std::vector<Offset> op_offsets;
  std::vector<PrefixChain> rest;
};

auto set_power_first = [](auto& ctx) { x3::_val(ctx).first = std::move(x3::_attr(ctx)); };
auto push_power_op = [](auto& ctx) {
  x3::_val(ctx).op_offsets.push_back(offset_of(ctx, x3::_attr(ctx).begin()));
};
auto push_power_operand = [](auto& ctx) { x3::_val(ctx).rest.push_back(std::move(x3::_attr(ctx))); };

// a ** u1 p1 ** u2 p2 == a ** (u1 (p1 ** (u2 p2))): `**` groups to the right
// and a prefix operator right of it covers the rest of the chain. Folded
// here, iteratively, so a long chain cannot exhaust the parser's stack.
auto on_power = [](auto& ctx) {
  PowerChain& chain = x3::_attr(ctx);
  const char* where = x3::get<BaseTag>(ctx).get();
  if (chain.rest.empty()) {
    x3::_val(ctx) = std::move(chain.first);
    return;
  }
  size_t n = chain.rest.size();
  Expr right = fold_prefix(std::move(chain.rest[n - 1]), where);
  for (size_t k = n - 1; k-- > 0;) {
    PrefixChain& item = chain.rest[k];
    std::vector<Expr> args;
    args.push_back(std::move(item.operand));
    args.push_back(std::move(right));
    item.operand = make_node(ExprKind::Binary, chain.op_offsets[k + 1], "**", std::move(args));
    check_depth(item.operand, where);
    right = fold_prefix(std::move(item), where);
  }
  std::vector<Expr> args;
  args.push_back(std::move(chain.first));
  args.push_back(std::move(right));
  x3::_val(ctx) = make_node(ExprKind::Binary, chain.op_offsets[0], "**", std::move(args));
  check_depth(x3::_val(ctx), where);
};

// Statements -----------------------------------------------------------------

struct RawStatement {
  std::string first;  ///< the leading identifier
  Offset first_offset = 0;
  std::string second; ///< `let NAME`: the name
  Offset second_offset = 0;
  bool is_declaration = false;
  Declaration declaration;
  Expr value;
};

auto set_first = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  x3::_val(ctx).first.assign(range.begin(), range.end());
  x3::_val(ctx).first_offset = offset_of(ctx, range.begin());
};
auto set_second = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  RawStatement& s = x3::_val(ctx);
  if (s.first != "let")
    throw ActionFailure{range.begin(),
                        fmt::format("expected ':' or '=' after '{}', found '{}'", s.first,
                                    std::string(range.begin(), range.end()))};
  s.second.assign(range.begin(), range.end());
  s.second_offset = offset_of(ctx, range.begin());
};
auto set_value = [](auto& ctx) { x3::_val(ctx).value = std::move(x3::_attr(ctx)); };
auto set_dtype = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::string name(range.begin(), range.end());
  RawStatement& s = x3::_val(ctx);
  s.is_declaration = true;
  std::optional<DType> t = find_dtype(name);
  if (!t)
    throw ActionFailure{range.begin(), fmt::format("unknown type '{}'{}", name,
                                                   did_you_mean(name, dtype_names()))};
  s.declaration.dtype = *t;
};
auto begin_shape = [](auto& ctx) { x3::_val(ctx).declaration.is_array = true; };
auto push_dim = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::string text(range.begin(), range.end());
  Dim d;
  d.offset = offset_of(ctx, range.begin());
  if (std::isdigit(static_cast<unsigned char>(text[0]))) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d.extent);
    if (ec != std::errc())
      throw ActionFailure{range.begin(), fmt::format("extent {} is too large", text)};
  } else {
    d.symbol = std::move(text);
  }
  x3::_val(ctx).declaration.shape.push_back(std::move(d));
};
auto check_distribution = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  std::string name(range.begin(), range.end());
  if (name != "uniform")
    throw ActionFailure{range.begin(),
                        fmt::format("unknown distribution '{}'; the one there is: uniform(lo, hi)", name)};
};
auto push_uniform = [](auto& ctx) {
  Expr& e = x3::_attr(ctx);
  if (e.kind != ExprKind::Number)
    throw ActionFailure{x3::get<BaseTag>(ctx).get() + e.offset,
                        "the bounds of uniform() must be numbers, such as uniform(-1, 1)"};
  x3::_val(ctx).declaration.uniform.push_back(std::move(e));
};
auto set_initial = [](auto& ctx) {
  Expr& e = x3::_attr(ctx);
  if (e.kind != ExprKind::Number && e.kind != ExprKind::Bool)
    throw ActionFailure{x3::get<BaseTag>(ctx).get() + e.offset,
                        "a scalar's initial value must be a literal, such as 0.02 or -1"};
  x3::_val(ctx).declaration.initial = std::move(e);
};

struct ProgramBuilder {
  std::vector<Statement> statements;
};

auto push_statement = [](auto& ctx) {
  RawStatement& s = x3::_attr(ctx);
  ProgramBuilder& p = x3::_val(ctx);
  if (s.is_declaration) {
    s.declaration.name = std::move(s.first);
    s.declaration.offset = s.first_offset;
    if (!s.declaration.is_array && !s.declaration.uniform.empty())
      throw ActionFailure{x3::get<BaseTag>(ctx).get() + s.declaration.uniform[0].offset,
                          "only arrays take a random distribution; give a scalar a value with ="};
    if (s.declaration.is_array && s.declaration.initial)
      throw ActionFailure{x3::get<BaseTag>(ctx).get() + s.declaration.initial->offset,
                          "only scalars take an initial value; arrays come from --input or are random"};
    p.statements.emplace_back(std::move(s.declaration));
    return;
  }
  Assignment a;
  a.local = !s.second.empty();
  a.name = a.local ? std::move(s.second) : std::move(s.first);
  a.offset = a.local ? s.second_offset : s.first_offset;
  a.value = std::move(s.value);
  p.statements.emplace_back(std::move(a));
};

// ---------------------------------------------------------------------------
// The grammar. Rule names are what "expected ..." messages say.

using x3::lit;
using x3::raw;
using x3::lexeme;

x3::rule<struct identifier_id> const identifier = "a name";
x3::rule<struct number_id, Expr> const number = "a number";
x3::rule<struct expr_id, Expr> const expr = "an expression";
x3::rule<struct ternary_id, Expr> const ternary = "an expression";
x3::rule<struct or_id, Expr> const logical_or = "an expression";
x3::rule<struct and_id, Expr> const logical_and = "an expression";
x3::rule<struct equality_id, Expr> const equality = "an expression";
x3::rule<struct relational_id, Expr> const relational = "an expression";
x3::rule<struct additive_id, Expr> const additive = "an expression";
x3::rule<struct multiplicative_id, Expr> const multiplicative = "an expression";
x3::rule<struct unary_id, Expr> const unary = "an expression";
x3::rule<struct prefix_chain_id, PrefixChain> const prefix_chain = "an expression";
x3::rule<struct power_id, Expr> const power = "an expression";
x3::rule<struct power_chain_id, PowerChain> const power_chain = "an expression";
x3::rule<struct primary_id, Expr> const primary = "an expression";
x3::rule<struct name_or_call_id, Expr> const name_or_call = "a name";
x3::rule<struct argument_id, Argument> const argument = "an argument";
x3::rule<struct keyword_argument_id, Argument> const keyword_argument = "an argument";
x3::rule<struct close_paren_id> const close_paren = "')'";
x3::rule<struct close_bracket_id> const close_bracket = "']'";
x3::rule<struct colon_id> const colon = "':'";
x3::rule<struct open_paren_id> const open_paren = "'('";
x3::rule<struct comma_id> const comma = "','";
x3::rule<struct assign_op_id> const assign_op = "'='";
using Range = boost::iterator_range<Iterator>;
x3::rule<struct type_id, Range> const type_name = "a type (f32, f16, bf16, f64, i32, i64, u8, bool)";
x3::rule<struct dim_id, Range> const dim = "a size (a name such as N, or a number)";
x3::rule<struct statement_id, RawStatement> const statement = "a statement";
x3::rule<struct statement_start_id> const statement_start = "':' or '='";
x3::rule<struct end_of_statement_id> const end_of_statement = "a newline or ';'";
x3::rule<struct end_of_input_id> const end_of_input = "a statement";
x3::rule<struct program_id, ProgramBuilder> const program = "a program";

auto const identifier_def = lexeme[(x3::alpha | lit('_')) >> *(x3::alnum | lit('_'))];

auto const exponent = x3::char_("eE") >> -x3::char_("+-") >> +x3::digit;
auto const number_def =
    raw[lexeme[((+x3::digit >> -(lit('.') >> *x3::digit)) | (lit('.') >> +x3::digit)) >>
               -exponent]][on_number];

auto const expr_def = ternary[assign];
auto const ternary_def = logical_or[assign] >>
                         -(raw[lit('?')][begin_ternary] > expr[push_operand] > colon >
                           ternary[push_operand]);

auto const logical_or_def =
    logical_and[assign] >> *(raw[lit("||")][begin_binary] > logical_and[push_operand]);
auto const logical_and_def =
    equality[assign] >> *(raw[lit("&&")][begin_binary] > equality[push_operand]);
auto const equality_def =
    relational[assign] >> *(raw[lit("==") | lit("!=")][begin_binary] > relational[push_operand]);
auto const relational_def =
    additive[assign] >> *(raw[lit("<=") | lit(">=") | lit('<') | lit('>')][begin_binary] >
                          additive[push_operand]);
auto const additive_def =
    multiplicative[assign] >> *(raw[lit('+') | lit('-')][begin_binary] > multiplicative[push_operand]);
auto const multiplicative_def =
    unary[assign] >>
    *(raw[(lit('*') >> !lit('*')) | lit('/') | lit('%')][begin_binary] > unary[push_operand]);

auto const prefix_op = raw[(lit('-') | lit('+') | (lit('!') >> !lit('=')))];
auto const prefix_chain_def = *prefix_op[push_prefix] >> power[set_chain_operand];
auto const unary_def = prefix_chain[on_unary];

// The operand right of `**` may carry prefix operators (2 ** -1), so it is a
// prefix chain whose operand is a primary; on_power groups the chain.
x3::rule<struct power_rhs_id, PrefixChain> const power_rhs = "an expression";
auto const power_rhs_def = *prefix_op[push_prefix] > primary[set_chain_operand];
auto const power_chain_def =
    primary[set_power_first] >> *(raw[lit("**")][push_power_op] > power_rhs[push_power_operand]);
auto const power_def = power_chain[on_power];

auto const primary_def = number[assign] | (lit('(') > expr[assign] > close_paren) |
                         name_or_call[assign];

auto const name_or_call_def =
    raw[identifier][on_name] >>
    -(lit('(')[begin_call] > -(argument[push_argument] >> *(lit(',') > argument[push_argument])) > close_paren);

auto const keyword_argument_def =
    raw[identifier][set_keyword] >> lit('=') >> !lit('=') > expr[set_keyword_value];
auto const argument_def = keyword_argument[assign] | expr[set_positional];

auto const close_paren_def = lit(')');
auto const close_bracket_def = lit(']');
auto const colon_def = lit(':');
auto const open_paren_def = lit('(');
auto const comma_def = lit(',');
auto const assign_op_def = lit('=') >> !lit('=');
auto const type_name_def = raw[identifier];
auto const dim_def = raw[identifier | lexeme[+x3::digit]];

auto const statement_start_def = lit(':') | assign_op | identifier;
auto const statement_def =
    raw[identifier][set_first] > &statement_start >>
    ((lit(':') > type_name[set_dtype] >>
      -(lit('[')[begin_shape] > (dim[push_dim] >> *(lit(',') > dim[push_dim])) > close_bracket) >>
      -(lit('~') > raw[identifier][check_distribution] > open_paren > unary[push_uniform] > comma >
        unary[push_uniform] > close_paren) >>
      -(lit('=') > unary[set_initial])) |
     (assign_op > expr[set_value]) |
     (raw[identifier][set_second] > assign_op > expr[set_value]));

auto const separator = lit('\n') | lit(';');
auto const end_of_statement_def = +separator | x3::eoi;
auto const end_of_input_def = x3::eoi;
auto const program_def =
    *separator >> *(statement[push_statement] > end_of_statement) > end_of_input;

BOOST_SPIRIT_DEFINE(identifier, number, expr, ternary, logical_or, logical_and, equality,
                    relational, additive, multiplicative, unary, prefix_chain, power, power_chain,
                    power_rhs, primary, name_or_call, argument, keyword_argument, close_paren,
                    close_bracket, colon, open_paren, comma, assign_op, type_name, dim, statement, statement_start,
                    end_of_statement, end_of_input, program)

// Blanks: spaces, tabs and carriage returns (newlines end statements).
auto const blank = x3::char_(" \t\r\f\v");

// ---------------------------------------------------------------------------

/// Comments become spaces, newlines inside brackets become spaces, and the
/// nesting is bounded. Returns the text the grammar parses.
std::string prepare(const SourceFile& src) {
  std::string text = src.text();
  std::vector<size_t> open; // offsets of the open brackets
  for (size_t k = 0; k < text.size(); ++k) {
    char c = text[k];
    bool comment = c == '#' || (c == '/' && k + 1 < text.size() && text[k + 1] == '/');
    if (comment) {
      while (k < text.size() && text[k] != '\n')
        text[k++] = ' ';
      if (k == text.size())
        break;
      c = '\n';
    }
    if (c == '\0')
      src.fail(ErrorKind::Parse, static_cast<Offset>(k), "unexpected NUL byte");
    if (c == '(' || c == '[') {
      open.push_back(k);
      if (open.size() > kMaxNesting)
        src.fail(ErrorKind::Parse, static_cast<Offset>(k),
                 fmt::format("brackets nest more than {} levels deep", kMaxNesting));
    } else if ((c == ')' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == '\n' && !open.empty()) {
      text[k] = ' ';
    }
  }
  return text;
}

std::string describe_found(const std::string& text, size_t pos) {
  if (pos >= text.size())
    return "end of input";
  char c = text[pos];
  if (c == '\n')
    return "end of line";
  auto is_word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; };
  if (is_word(c)) {
    size_t end = pos;
    while (end < text.size() && is_word(text[end]))
      ++end;
    return fmt::format("'{}'", text.substr(pos, std::min<size_t>(end - pos, 32)));
  }
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
    return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
  return fmt::format("'{}'", c);
}

template <typename Parser, typename Attribute>
void run_parser(const SourceFile& src, const Parser& parser, Attribute& attr) {
  std::string text = prepare(src);
  Iterator begin = text.data();
  Iterator first = begin;
  Iterator last = text.data() + text.size();
  auto skip_blanks = [&](Iterator it) {
    while (it != last && (*it == ' ' || *it == '\t' || *it == '\r' || *it == '\f' || *it == '\v'))
      ++it;
    return it;
  };
  try {
    bool ok = x3::phrase_parse(first, last, x3::with<BaseTag>(std::cref(begin))[parser], blank, attr);
    if (!ok || first != last) {
      Iterator at = skip_blanks(first);
      src.fail(ErrorKind::Parse, static_cast<Offset>(at - begin),
               fmt::format("unexpected {}", describe_found(text, at - begin)));
    }
  } catch (const x3::expectation_failure<Iterator>& e) {
    Iterator at = skip_blanks(e.where());
    src.fail(ErrorKind::Parse, static_cast<Offset>(at - begin),
             fmt::format("expected {}, found {}", e.which(), describe_found(text, at - begin)));
  } catch (const ActionFailure& e) {
    src.fail(ErrorKind::Parse, static_cast<Offset>(e.where - begin), e.message);
  }
}

} // namespace

ParsedProgram parse_program(std::string_view text, std::string_view filename) {
  ParsedProgram result;
  result.source = SourceFile(std::string(filename), std::string(text));
  ProgramBuilder builder;
  run_parser(result.source, program, builder);
  result.statements = std::move(builder.statements);
  return result;
}

Expr parse_expression(std::string_view text, std::string_view filename) {
  SourceFile src{std::string(filename), std::string(text)};
  Expr e;
  run_parser(src, expr > end_of_input, e);
  return e;
}

} // namespace gpukit::text
