// Lowering: the IR a text program gives (checked as ir::print text), names,
// shapes and the command-line bindings, and every lowering error's message.
#include "lowering.hpp"
#include "dsl/text/lower.hpp"

#include "codegen/ir_printer.hpp"
#include "dsl/text/parser.hpp"

#include <gtest/gtest.h>

namespace gpukit::text {
namespace {

using test::lower_error;
using test::lower_text;

TEST(Lower, OneLinerReadsUndeclaredNamesAsF32Inputs) {
  LoweredProgram lp = lower_text("out = 2*x + sin(y)");
  EXPECT_EQ(ir::print(lp.program), "# out = 2 * x + sin(y)  (t.gk:1)\n"
                                   "kernel(x: f32[], y: f32[]; s0: i32 weak) -> (out: f32[])\n"
                                   "  %0 = scalar s0 : i32\n"
                                   "  %1 = input x : f32\n"
                                   "  %2 = mul %0, %1 : ?\n"
                                   "  %3 = input y : f32\n"
                                   "  %4 = sin %3 : ?\n"
                                   "  %5 = add %2, %4 : ?\n"
                                   "  out = %5\n");
  ASSERT_EQ(lp.scalar_values.size(), 1u);
  EXPECT_EQ(*lp.scalar_values[0], ir::Constant::of_int(DType::Int32, 2));
  ASSERT_EQ(lp.inputs.size(), 2u);
  EXPECT_EQ(lp.inputs[0].describe(), "f32[N]");
  EXPECT_EQ(lp.sizes.at("N"), -1);
}

TEST(Lower, DeclarationsShapesAndScalars) {
  LowerOptions opts;
  opts.sizes["N"] = 1000;
  LoweredProgram lp = lower_text("x: f16[N]\nr: f32 = 0.5\nk: i64\nlet t = x * r\n"
                                 "out: f32[N]\nout = where(t > 0, t, f16(1.5)) + k",
                                 opts);
  EXPECT_EQ(lp.elements(), 1000);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[N] = [1000]");
  EXPECT_EQ(lp.program.outputs()[0].type, DType::Float32);
  ASSERT_EQ(lp.program.scalars().size(), 3u);
  EXPECT_EQ(lp.program.scalars()[0].name, "r");
  EXPECT_FALSE(lp.program.scalars()[0].weak);
  EXPECT_EQ(lp.program.scalars()[1].name, "s0"); // the 0 of `t > 0`
  EXPECT_EQ(lp.program.scalars()[2].name, "k");
  EXPECT_EQ(*lp.scalar_values[0], ir::Constant::of_float(DType::Float32, 0.5));
  EXPECT_FALSE(lp.scalar_values[2].has_value());
  EXPECT_THROW(lp.check_scalars_bound(), Error);
  opts.scalars["k"] = "-3";
  lp = lower_text("x: f16[N]\nr: f32 = 0.5\nk: i64\nout = x * r + k", opts);
  EXPECT_EQ(*lp.scalar_values[1], ir::Constant::of_int(DType::Int64, -3));
  EXPECT_NO_THROW(lp.check_scalars_bound());
}

TEST(Lower, OutputTypeFollowsTheDslRules) {
  auto out_type = [](std::string_view text) {
    return lower_text(text).program.outputs()[0].type;
  };
  EXPECT_EQ(out_type("x: i32[N]\no = x + 1"), DType::Int32);
  EXPECT_EQ(out_type("x: i32[N]\no = x + 1.5"), DType::Float32);
  EXPECT_EQ(out_type("x: i32[N]\no = sqrt(x)"), DType::Float32);
  EXPECT_EQ(out_type("x: f16[N]\no = x * 2.0"), DType::Float16);
  EXPECT_EQ(out_type("x: f16[N]\ny: bf16[N]\no = x + y"), DType::Float32);
  EXPECT_EQ(out_type("x: f64[N]\no = x < 1"), DType::Bool);
  EXPECT_EQ(out_type("x: u8[N]\ny: i64[N]\no = where(x > 0, x, y)"), DType::Int64);
  EXPECT_EQ(out_type("x: f32[N]\no = i32(x)"), DType::Int32);
}

TEST(Lower, KernelNamesAvoidReservedWordsLikeTheDsl) {
  LoweredProgram lp = lower_text("s0: f32[N]\nn: f32[N]\nt1: f32 = 1\nout = s0 * 3 + n + t1\nint = out");
  EXPECT_EQ(lp.program.inputs()[0].name, "s0_in");
  EXPECT_EQ(lp.program.inputs()[1].name, "n_in");
  EXPECT_EQ(lp.program.scalars()[0].name, "s0");
  EXPECT_EQ(lp.program.scalars()[1].name, "t1_arg");
  EXPECT_EQ(lp.program.outputs()[1].name, "int_");
  EXPECT_EQ(lp.inputs[0].name, "s0"); // the program's own names stay
  EXPECT_EQ(lp.outputs[1].name, "int");
}

TEST(Lower, InputSpecsBindSizes) {
  LowerOptions opts;
  opts.inputs["m"] = ArraySpec{DType::BFloat16, {10, 20}, "m.npy"};
  LoweredProgram lp = lower_text("m: bf16[R, C]\nout = m * 2", opts);
  EXPECT_EQ(lp.elements(), 200);
  EXPECT_EQ(lp.outputs[0].describe(), "bf16[R, C] = [10, 20]");
  // One-liners take the file's type and shape.
  LowerOptions one;
  one.inputs["x"] = ArraySpec{DType::Float64, {7}, "x.npy"};
  lp = lower_text("out = x + y", one);
  EXPECT_EQ(lp.program.inputs()[0].type, DType::Float64);
  EXPECT_EQ(lp.elements(), 7);
}

TEST(Lower, Errors) {
  EXPECT_EQ(lower_error("x: f32[N]\nout = x + xz", {}, ErrorKind::Parse),
            "t.gk:2:11: error: unknown name 'xz'; did you mean 'x'?\n"
            "  out = x + xz\n"
            "            ^\n"
            "note: this program declares its arrays, so every input needs a declaration such as "
            "x: f32[N]");
  EXPECT_EQ(lower_error("out = sinn(x)", {}, ErrorKind::Parse),
            "t.gk:1:7: error: unknown function 'sinn'; did you mean 'sin'?\n"
            "  out = sinn(x)\n"
            "        ^");
  EXPECT_EQ(lower_error("x: f32[N]\nm: bf16[R, C]\nout = x + m", {}, ErrorKind::Shape),
            "t.gk:3:9: error: shapes do not broadcast in '+': 'x' is f32[N], but 'm' is bf16[R, C]\n"
            "  out = x + m\n"
            "          ^\n"
            "note: sizes are compared by name until bound; bind them with --size");
  LowerOptions sizes;
  sizes.sizes = {{"N", 200}, {"R", 10}, {"C", 20}};
  EXPECT_NO_THROW(lower_text("x: f32[N]\nm: f32[R, C]\nout = x * 2", sizes));
  sizes.sizes["N"] = 100;
  EXPECT_EQ(lower_error("x: f32[N]\nm: f32[R, C]\nout = x * 2 + m", sizes, ErrorKind::Shape),
            "t.gk:3:13: error: shapes do not broadcast in '+': 'x * 2' has the shape of 'x', f32[N] = [100], "
            "but 'm' is f32[R, C] = [10, 20]\n"
            "  out = x * 2 + m\n"
            "              ^\n"
            "note: broadcasting (NumPy rules) needs each trailing dimension pair to be equal or 1");
  EXPECT_EQ(lower_error("out = sum(x, axis=1)", {}, ErrorKind::Shape),
            "t.gk:1:19: error: axis 1 is out of range: 'x' is f32[N], which has 1 dimension (axes -1..0)\n"
            "  out = sum(x, axis=1)\n"
            "                    ^");
  EXPECT_EQ(lower_error("out = max(x, axis=1.5)", {}, ErrorKind::Type),
            "t.gk:1:19: error: the axis of max() must be an integer literal, not '1.5'\n"
            "  out = max(x, axis=1.5)\n"
            "                    ^");
  EXPECT_EQ(lower_error("out = where(x, y)"),
            "t.gk:1:7: error: where() takes 3 arguments, given 2\n"
            "  out = where(x, y)\n"
            "        ^");
  EXPECT_EQ(lower_error("out = sin(x, axis=1)"),
            "t.gk:1:7: error: sin() takes no keyword arguments; only reductions take an axis\n"
            "  out = sin(x, axis=1)\n"
            "        ^");
  EXPECT_EQ(lower_error("out = t * 2\nlet t = x"),
            "t.gk:1:7: error: 't' is used before it is assigned on line 2\n"
            "  out = t * 2\n"
            "        ^");
  EXPECT_EQ(lower_error("out = x\nout = y"),
            "t.gk:2:1: error: 'out' is assigned twice; the first assignment is on line 1\n"
            "  out = y\n"
            "  ^\n"
            "note: give the second value another name");
  EXPECT_EQ(lower_error("x: f32[N]\nx: f32[N]\nout = x"),
            "t.gk:2:1: error: 'x' is declared twice; the first declaration is on line 1\n"
            "  x: f32[N]\n"
            "  ^");
  EXPECT_EQ(lower_error("r: i32 = 0.5\nout = r", {}, ErrorKind::Type),
            "t.gk:1:10: error: 'r' is declared i32 but its value 0.5 is not one: i32 is an "
            "integer type but 0.5 is a float\n"
            "  r: i32 = 0.5\n"
            "           ^");
  EXPECT_EQ(lower_error("sin = x"),
            "t.gk:1:1: error: 'sin' is the name of a function; an output needs another name\n"
            "  sin = x\n"
            "  ^");
  EXPECT_EQ(lower_error("out = x * sin"),
            "t.gk:1:11: error: 'sin' is a function; call it, as in sin(x)\n"
            "  out = x * sin\n"
            "            ^");
  EXPECT_EQ(lower_error("x: f32[N]\nout = x(2)"),
            "t.gk:2:7: error: 'x' is an array, not a function\n"
            "  out = x(2)\n"
            "        ^");
  EXPECT_EQ(lower_error("x: f32[N]\ny: f32[M]\na = x\nb = y", {}, ErrorKind::Shape),
            "t.gk:4:1: error: outputs differ in shape: 'a' is f32[N], but 'b' is f32[M]\n"
            "  b = y\n"
            "  ^\n"
            "note: a program is one elementwise kernel: all its outputs have one shape");
  EXPECT_EQ(lower_error("x: f32[N]\nout: f32[M]\nout = x", {}, ErrorKind::Shape),
            "t.gk:3:1: error: 'out' is declared f32[M], but its value 'x' is f32[N]\n"
            "  out = x\n"
            "  ^");
  EXPECT_EQ(lower_error("x: f32[N]\nr: f32\nout = r * 2", {}, ErrorKind::Shape),
            "t.gk:3:1: error: 'out' reads no array, so its shape is unknown\n"
            "  out = r * 2\n"
            "  ^\n"
            "note: declare it, e.g. out: f32[N]");
  EXPECT_EQ(lower_error("x: f32[N]\n"),
            "t.gk:2:1: error: the program writes no output\n"
            "  \n"
            "  ^\n"
            "note: add an assignment such as `out = x * 2`");
  EXPECT_EQ(lower_error("out = __x * 2"),
            "t.gk:1:7: error: '__x': names starting with '__', 'gpukit' or 'gk_' are reserved; an input "
            "needs another name\n"
            "  out = __x * 2\n"
            "        ^");
  EXPECT_EQ(lower_error("x: f32[A, B, C, D, E]\nout = x", {}, ErrorKind::Shape),
            "t.gk:1:1: error: 'x' has 5 dimensions; arrays have at most 4\n"
            "  x: f32[A, B, C, D, E]\n"
            "  ^");
}

TEST(Lower, BindingErrors) {
  LowerOptions o;
  o.sizes["M"] = 5;
  EXPECT_EQ(lower_error("out = x", o),
            "--size M=5: the program has no size named 'M' (its sizes: N)");
  o = {};
  o.scalars["q"] = "1";
  EXPECT_EQ(lower_error("x: f32[N]\nout = x", o), "--scalar q=1: the program has no scalar named 'q'");
  o = {};
  o.scalars["r"] = "1.5";
  EXPECT_EQ(lower_error("r: i32\nx: f32[N]\nout = x * r", o, ErrorKind::Type),
            "--scalar r=1.5: 'r' is i32 and i32 is an integer type but 1.5 is a float");
  o = {};
  o.inputs["x"] = ArraySpec{DType::Float64, {10}, "x.npy"};
  EXPECT_EQ(lower_error("x: f32[N]\nout = x", o, ErrorKind::Type),
            "t.gk:1:1: error: 'x' is declared f32 but x.npy holds f64\n"
            "  x: f32[N]\n"
            "  ^\n"
            "note: convert the file (numpy: a.astype(...)) or declare x: f64[...]");
  o.inputs["x"] = ArraySpec{DType::Float32, {10, 2}, "x.npy"};
  EXPECT_EQ(lower_error("x: f32[N]\nout = x", o, ErrorKind::Shape),
            "t.gk:1:1: error: 'x' is declared f32[N] (1-D) but x.npy has shape (10, 2) (2-D)\n"
            "  x: f32[N]\n"
            "  ^");
  o.inputs["x"] = ArraySpec{DType::Float32, {10}, "x.npy"};
  o.sizes["N"] = 11;
  EXPECT_EQ(lower_error("x: f32[N]\nout = x", o, ErrorKind::Shape),
            "t.gk:1:1: error: 'x' is declared f32[N] = [11] with N = 11, but x.npy has shape (10,)\n"
            "  x: f32[N]\n"
            "  ^\n"
            "note: drop --size N=... to take N from the file, or give a file of that shape");
  o = {};
  o.inputs["z"] = ArraySpec{DType::Float32, {10}, "z.npy"};
  EXPECT_EQ(lower_error("out = x", o), "--input z=z.npy: the program has no input named 'z'");
  LoweredProgram lp = lower_text("out = x");
  EXPECT_THROW(
      {
        try {
          lp.elements();
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "size N is not bound; give --size N=...");
          throw;
        }
      },
      Error);
}

TEST(Lower, RoundTripThroughCanonicalText) {
  // parse -> IR and parse -> print -> parse -> IR give the same program.
  const char* programs[] = {
      "x: f32[N]\ny: f32[N]\nout = 2 * x + sin(y)",
      "a: f64[N]\nb: i32[N]\nlet t = -a ** 2 % 3\no1 = t > b ? t : -b\no2 = !(t < 0) || b == 1",
      "x: bf16[R, C]\nr: f32 = -0.25\nout = fma(x, r, clamp(x, -1, 1)) / max(x, 1e-3)",
      "out = where(x != 0, 1 / x, inf) + nan * 0",
  };
  for (const char* text : programs) {
    ParsedProgram p = parse_program(text, "t.gk");
    ParsedProgram again = parse_program(format_program(p), "t.gk");
    std::string a = ir::print(lower(p).program);
    std::string b = ir::print(lower(again).program);
    a = a.substr(a.find('\n'));
    b = b.substr(b.find('\n'));
    EXPECT_EQ(a, b) << text;
  }
}

TEST(Lower, InputsNamedLikeStageValuesGetAPrefix) {
  LoweredProgram lp = lower_text("out = r0 * 2 + gk1");
  ASSERT_EQ(lp.program.inputs().size(), 2u);
  EXPECT_EQ(lp.program.inputs()[0].name, "in_r0");
  EXPECT_EQ(lp.program.inputs()[1].name, "gk1");
}

} // namespace
} // namespace gpukit::text
