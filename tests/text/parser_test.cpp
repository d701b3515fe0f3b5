// The grammar: what parses to what (checked through the canonical printer),
// and that printing then parsing gives the same tree back.
#include "dsl/text/parser.hpp"

#include <gtest/gtest.h>

namespace gpukit::text {
namespace {

std::string canonical(std::string_view text) { return format_program(parse_program(text, "t.gk")); }

std::string parse_error(std::string_view text) {
  try {
    parse_program(text, "t.gk");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Parse);
    return e.what();
  }
  return "(no error)";
}

TEST(Parser, Precedence) {
  EXPECT_EQ(canonical("out = 2*x + sin(y)"), "out = 2 * x + sin(y)\n");
  EXPECT_EQ(canonical("o = (a + b) * c"), "o = (a + b) * c\n");
  EXPECT_EQ(canonical("o = a + (b * c)"), "o = a + b * c\n");
  EXPECT_EQ(canonical("o = a - (b - c)"), "o = a - (b - c)\n");
  EXPECT_EQ(canonical("o = (a - b) - c"), "o = a - b - c\n");
  EXPECT_EQ(canonical("o = a ** b ** c"), "o = a ** b ** c\n");
  EXPECT_EQ(canonical("o = (a ** b) ** c"), "o = (a ** b) ** c\n");
  EXPECT_EQ(canonical("o = -a ** 2"), "o = -a ** 2\n");
  EXPECT_EQ(canonical("o = (-a) ** 2"), "o = (-a) ** 2\n");
  EXPECT_EQ(canonical("o = 2 ** -a"), "o = 2 ** -a\n");
  EXPECT_EQ(canonical("o = a < b && b <= c || !d"), "o = a < b && b <= c || !d\n");
  EXPECT_EQ(canonical("o = a || b && c"), "o = a || b && c\n");
  EXPECT_EQ(canonical("o = (a || b) && c"), "o = (a || b) && c\n");
  EXPECT_EQ(canonical("o = a == b != c"), "o = a == b != c\n");
  EXPECT_EQ(canonical("o = c ? a : d ? b : e"), "o = c ? a : d ? b : e\n");
  EXPECT_EQ(canonical("o = (c ? a : d) ? b : e"), "o = (c ? a : d) ? b : e\n");
  EXPECT_EQ(canonical("o = a % b * c / d"), "o = a % b * c / d\n");
  EXPECT_EQ(canonical("o = - -a"), "o = - -a\n");
  EXPECT_EQ(canonical("o = !!a"), "o = !!a\n");
}

TEST(Parser, Literals) {
  EXPECT_EQ(canonical("o = 1 + 2.5 + 1e-3 + .5 + 3. + 6.02E+23 + inf + nan"),
            "o = 1 + 2.5 + 1e-3 + .5 + 3. + 6.02E+23 + inf + nan\n");
  EXPECT_EQ(canonical("o = -2 * x"), "o = -2 * x\n");
  Expr e = parse_expression("-2", "t");
  EXPECT_EQ(e.kind, ExprKind::Number);
  EXPECT_EQ(e.int_value, -2);
  EXPECT_FALSE(e.is_float);
  e = parse_expression("1.5e3", "t");
  EXPECT_TRUE(e.is_float);
  EXPECT_EQ(e.float_value, 1500.0);
  e = parse_expression("-inf", "t");
  EXPECT_EQ(e.float_value, -std::numeric_limits<double>::infinity());
  e = parse_expression("true", "t");
  EXPECT_EQ(e.kind, ExprKind::Bool);
  EXPECT_EQ(e.int_value, 1);
  EXPECT_EQ(parse_expression("1e999", "t").float_value, std::numeric_limits<double>::infinity());
}

TEST(Parser, Statements) {
  EXPECT_EQ(canonical("x: f32[N]; m: bf16[R, C]\n\n# comment\nr: f32 = 0.02 // another\n"
                      "s: i32\nlet t = x * r\nout = t"),
            "x: f32[N]\nm: bf16[R, C]\nr: f32 = 0.02\ns: i32\nlet t = x * r\nout = t\n");
  EXPECT_EQ(canonical("x: float32[16, 4]"), "x: f32[16, 4]\n");
  EXPECT_EQ(canonical("k: i64 = -3"), "k: i64 = -3\n");
  EXPECT_EQ(canonical("p: f32[N] ~ uniform(5, 30.5)"), "p: f32[N] ~ uniform(5, 30.5)\n");
  EXPECT_EQ(canonical(""), "");
  EXPECT_EQ(canonical("\n;;\n  # only a comment\n"), "");
  // A newline inside brackets continues the statement.
  EXPECT_EQ(canonical("out = where(x > 0,\n   x,   # keep\n   0)\n"), "out = where(x > 0, x, 0)\n");
}

TEST(Parser, CallsAndKeywords) {
  EXPECT_EQ(canonical("o = sum(x, axis=1)"), "o = sum(x, axis=1)\n");
  EXPECT_EQ(canonical("o = f16(x) + max(x, axis=-1)"), "o = f16(x) + max(x, axis=-1)\n");
  EXPECT_EQ(canonical("o = g()"), "o = g()\n");
  Expr e = parse_expression("sum(x, axis = 0)", "t");
  ASSERT_EQ(e.kind, ExprKind::Call);
  ASSERT_EQ(e.keywords.size(), 2u);
  EXPECT_EQ(e.keywords[0], "");
  EXPECT_EQ(e.keywords[1], "axis");
  // `a == b` as an argument is a comparison, not a keyword.
  e = parse_expression("where(a == b, a, b)", "t");
  EXPECT_EQ(e.keywords[0], "");
}

TEST(Parser, RoundTripIsIdentity) {
  const char* programs[] = {
      "x: f32[N]\ny: f32[N]\nout = 2 * x + sin(y)",
      "o = -(a + b) * -c ** -d ** e",
      "o = a ? b ? c : d : e ? f : g",
      "o = !(a < b) || c >= d && e != f",
      "o = where(x > 0, x, 0.01 * x) % 3",
      "o = ((a)) + (((b * c)))",
      "o = +a - +-2",
      "o = 1.0e10 / -0.5",
  };
  for (const char* text : programs) {
    ParsedProgram once = parse_program(text, "t.gk");
    std::string printed = format_program(once);
    ParsedProgram twice = parse_program(printed, "t.gk");
    EXPECT_EQ(once.statements, twice.statements) << text << "\n -> " << printed;
    EXPECT_EQ(printed, format_program(twice));
  }
}

TEST(Parser, Offsets) {
  ParsedProgram p = parse_program("x: f32[N]\nout = x +  y", "t.gk");
  const auto& a = std::get<Assignment>(p.statements[1]);
  EXPECT_EQ(a.offset, 10u);
  EXPECT_EQ(a.value.offset, 18u); // the '+'
  EXPECT_EQ(a.value.args[1].offset, 21u);
  EXPECT_EQ(p.source.locate(21).line, 2u);
  EXPECT_EQ(p.source.locate(21).column, 12u);
}

TEST(ParserErrors, Golden) {
  EXPECT_EQ(parse_error("out = 2 * x +\n"),
            "t.gk:1:14: error: expected an expression, found end of line\n"
            "  out = 2 * x +\n"
            "               ^");
  EXPECT_EQ(parse_error("x: f32[N]\nout = (x + 1"),
            "t.gk:2:13: error: expected ')', found end of input\n"
            "  out = (x + 1\n"
            "              ^");
  EXPECT_EQ(parse_error("out = x y"),
            "t.gk:1:9: error: expected a newline or ';', found 'y'\n"
            "  out = x y\n"
            "          ^");
  EXPECT_EQ(parse_error("x: f33[N]"),
            "t.gk:1:4: error: unknown type 'f33'; did you mean 'f32'?\n"
            "  x: f33[N]\n"
            "     ^");
  EXPECT_EQ(parse_error("x f32"),
            "t.gk:1:3: error: expected ':' or '=' after 'x', found 'f32'\n"
            "  x f32\n"
            "    ^");
  EXPECT_EQ(parse_error("x: f32[N,]"),
            "t.gk:1:10: error: expected a size (a name such as N, or a number), found ']'\n"
            "  x: f32[N,]\n"
            "           ^");
  EXPECT_EQ(parse_error("x: f32[N"),
            "t.gk:1:9: error: expected ']', found end of input\n"
            "  x: f32[N\n"
            "          ^");
  EXPECT_EQ(parse_error("r: f32 = x"),
            "t.gk:1:10: error: a scalar's initial value must be a literal, such as 0.02 or -1\n"
            "  r: f32 = x\n"
            "           ^");
  EXPECT_EQ(parse_error("o = 99999999999999999999"),
            "t.gk:1:5: error: integer literal 99999999999999999999 does not fit in 64 bits; "
            "write it as a float (99999999999999999999.0)\n"
            "  o = 99999999999999999999\n"
            "      ^");
  EXPECT_EQ(parse_error("o = sum(x, axis=1, axis=2)"),
            "t.gk:1:20: error: argument 'axis' is given twice\n"
            "  o = sum(x, axis=1, axis=2)\n"
            "                     ^");
  EXPECT_EQ(parse_error("o = sum(axis=1, x)"),
            "t.gk:1:17: error: a positional argument cannot follow a keyword argument\n"
            "  o = sum(axis=1, x)\n"
            "                  ^");
  EXPECT_EQ(parse_error("o = a ? b"),
            "t.gk:1:10: error: expected ':', found end of input\n"
            "  o = a ? b\n"
            "           ^");
  EXPECT_EQ(parse_error("\to = $"),
            "t.gk:1:6: error: expected an expression, found '$'\n"
            "  \to = $\n"
            "  \t    ^");
  EXPECT_EQ(parse_error("x: f32[N] = 1"),
            "t.gk:1:13: error: only scalars take an initial value; arrays come from --input or are random\n"
            "  x: f32[N] = 1\n"
            "              ^");
  EXPECT_EQ(parse_error("p: f32[N] ~ normal(0, 1)"),
            "t.gk:1:13: error: unknown distribution 'normal'; the one there is: uniform(lo, hi)\n"
            "  p: f32[N] ~ normal(0, 1)\n"
            "              ^");
  EXPECT_EQ(parse_error("p: f32[N] ~ uniform(0 1)"),
            "t.gk:1:23: error: expected ',', found '1'\n"
            "  p: f32[N] ~ uniform(0 1)\n"
            "                        ^");
  EXPECT_EQ(parse_error("o = f(x,)"),
            "t.gk:1:9: error: expected an argument, found ')'\n"
            "  o = f(x,)\n"
            "          ^");
  EXPECT_EQ(parse_error("o = 2(x)"),
            "t.gk:1:6: error: expected a newline or ';', found '('\n"
            "  o = 2(x)\n"
            "       ^");
}

TEST(ParserErrors, Limits) {
  std::string deep = "o = " + std::string(100, '(') + "x" + std::string(100, ')');
  EXPECT_NE(parse_error(deep).find("brackets nest more than 64 levels deep"), std::string::npos);
  std::string chain = "o = x";
  for (int k = 0; k < 2000; ++k)
    chain += " + x";
  EXPECT_NE(parse_error(chain).find("nested more than 512 levels"), std::string::npos);
  EXPECT_NE(parse_error("o = " + std::string(5000, '-') + "x").find("nested more than"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string("o = x\0", 6)).find("NUL"), std::string::npos);
}

} // namespace
} // namespace gpukit::text
