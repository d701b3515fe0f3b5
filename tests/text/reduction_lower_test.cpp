// Reductions in the text language (dsl/text/lower_reduction.cpp): the plan
// each statement lowers to (checked as ir::print text), the shapes, scopes
// and literal slots, how statements split into kernels, and every error's
// message.
#include "lowering.hpp"
#include "dsl/text/lower.hpp"

#include "codegen/ir_printer.hpp"
#include "dsl/text/parser.hpp"
#include "dsl/text/reduction_statement.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <llvm/Support/MemoryBuffer.h>

namespace gpukit::text {
namespace {

using test::lower_error;
using test::lower_text;

/// The only reduction statement's plan, printed.
std::string plan_of(std::string_view text) {
  LoweredProgram lp = lower_text(text);
  EXPECT_EQ(lp.reductions.size(), 1u) << text;
  return lp.reductions.empty() ? "" : ir::print(lp.reductions[0].plan);
}

std::vector<std::string> scalar_names(const LoweredReduction& r) {
  std::vector<std::string> names;
  for (const LoweredReduction::Scalar& s : r.scalars)
    names.push_back(s.name);
  return names;
}

TEST(TextReduction, FullSumOfAProduct) {
  LoweredProgram lp = lower_text("x: f32[N]\ny: f32[N]\ns = sum(x * y)");
  ASSERT_EQ(lp.reductions.size(), 1u);
  const LoweredReduction& r = lp.reductions[0];
  EXPECT_EQ(ir::print(r.plan), "stage r0 = sum<f32 -> f32> of:\n"
                               "kernel(x: f32[], y: f32[]) -> (v: f32[])\n"
                               "  %0 = input x : f32\n"
                               "  %1 = input y : f32\n"
                               "  %2 = mul %0, %1 : f32\n"
                               "  v = %2\n");
  EXPECT_FALSE(r.axis.has_value());
  EXPECT_EQ(r.scope, ir::EpilogueScope::Group);
  EXPECT_EQ(r.plan.label, "s = sum(x * y)  (t.gk:3)");
  EXPECT_EQ(r.what, "`s = sum(x * y)` (t.gk:3)");
  ASSERT_EQ(lp.outputs.size(), 1u);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[]"); // 0-d
  EXPECT_TRUE(lp.program.outputs().empty());     // no elementwise kernel
  EXPECT_TRUE(lp.elementwise_outputs.empty());
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0], (std::pair<std::string, size_t>{"x", 0}));
  EXPECT_EQ(r.inputs[1], (std::pair<std::string, size_t>{"y", 1}));
  EXPECT_EQ(lp.inputs[1].name, "y");
  EXPECT_TRUE(lp.warnings.empty());
}

TEST(TextReduction, ResultTypesFollowTheReduction) {
  auto result = [](std::string_view expr, std::string_view decl = "x: i32[R, C]") {
    LoweredProgram lp = lower_text(fmt::format("{}\no = {}", decl, expr));
    return lp.outputs.at(0).describe();
  };
  EXPECT_EQ(result("sum(x, axis=1)"), "i64[R]");
  EXPECT_EQ(result("prod(x)"), "i64[]");
  EXPECT_EQ(result("mean(x, axis=0)"), "f32[C]");
  EXPECT_EQ(result("var(x, 0)"), "f32[C]");
  EXPECT_EQ(result("mean(x)", "x: f64[N]"), "f64[]");
  EXPECT_EQ(result("min(x, axis=1)"), "i32[R]");
  EXPECT_EQ(result("amax(x, 1)"), "i32[R]");
  EXPECT_EQ(result("argmin(x, axis=1)"), "i64[R]");
  EXPECT_EQ(result("argmax(x)"), "i64[]");
  EXPECT_EQ(result("any(x > 0, axis=1)"), "bool[R]");
  EXPECT_EQ(result("all(x)"), "bool[]");
  EXPECT_EQ(result("mean(x, axis=1)", "x: f16[R, C]"), "f16[R]");
  EXPECT_EQ(result("max(x)", "x: bf16[N]"), "bf16[]");
  // var is two stages: the mean, then the mean squared deviation.
  LoweredProgram lp = lower_text("x: f32[N]\nv = var(x)");
  EXPECT_EQ(lp.reductions[0].plan.stages.size(), 2u);
}

// The axis takes a literal slot after the reduced expression's, as the
// DSL's axis takes a collected scalar slot: `sum(x * 2, 1) + 3` is s0, (s1), s2.
TEST(TextReduction, TheAxisTakesALiteralSlot) {
  LoweredProgram lp = lower_text("x: f32[R, C]\nout = sum(x * 2, axis=1) + 3");
  const LoweredReduction& r = lp.reductions[0];
  EXPECT_EQ(scalar_names(r), (std::vector<std::string>{"s0", "s2"}));
  EXPECT_EQ(ir::print(r.plan), "stage r0 = sum<f32 -> f32> of:\n"
                               "kernel(x: f32[]; s0: f32 weak) -> (v: f32[])\n"
                               "  %0 = input x : f32\n"
                               "  %1 = scalar s0 : f32\n"
                               "  %2 = mul %0, %1 : f32\n"
                               "  v = %2\n"
                               "epilogue (once per result):\n"
                               "kernel(; r0: f32, s2: f32 weak) -> (out: f32[])\n"
                               "  %0 = scalar r0 : f32\n"
                               "  %1 = scalar s2 : f32\n"
                               "  %2 = add %0, %1 : f32\n"
                               "  out = %2\n");
  EXPECT_EQ(r.scalars[0].value, ir::Constant::of_int(DType::Int32, 2));
  EXPECT_EQ(r.scalars[1].value, ir::Constant::of_int(DType::Int32, 3));
  EXPECT_EQ(lp.outputs[0].describe(), "f32[R]");
  EXPECT_EQ(r.axis, 1);
  EXPECT_EQ(r.scope, ir::EpilogueScope::Group);
}

TEST(TextReduction, NegativeAxesKeepdimsAndPositionalAxes) {
  LowerOptions opts;
  opts.sizes = {{"R", 3}, {"C", 5}};
  LoweredProgram lp = lower_text("x: f32[R, C]\nm = max(x, axis=-1, keepdims=true)\n"
                                 "c = mean(x, -2)\nk = sum(x, keepdims=true)",
                                 opts);
  ASSERT_EQ(lp.reductions.size(), 3u);
  EXPECT_EQ(lp.reductions[0].axis, 1);
  EXPECT_TRUE(lp.reductions[0].keepdims);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[R, 1] = [3, 1]");
  EXPECT_EQ(lp.reductions[1].axis, 0);
  EXPECT_EQ(lp.outputs[1].describe(), "f32[C] = [5]");
  EXPECT_EQ(lp.outputs[2].describe(), "f32[1, 1]"); // NumPy: every axis kept as 1
  EXPECT_EQ(lp.outputs[2].elements(), 1);
}

// The reduce-then-broadcast form is the DSL's plan: tests/golden holds what
// the engine describes for the C++ softmax over [8, 4096] (the kernel's name
// is the plan's structural hash).
TEST(TextReduction, SoftmaxIsTheDslsPlan) {
  auto buffer = llvm::MemoryBuffer::getFile(std::string(GPUKIT_SOURCE_DIR) + "/tests/golden/reduce_softmax_f32.plan");
  ASSERT_TRUE(bool(buffer));
  std::string golden = (*buffer)->getBuffer().str();
  auto described = [](std::string_view text) {
    LowerOptions opts;
    opts.sizes = {{"R", 8}, {"C", 4096}};
    LoweredProgram lp = lower_text(text, opts);
    EXPECT_EQ(lp.reductions.size(), 1u);
    EXPECT_EQ(lp.reductions[0].scope, ir::EpilogueScope::Element);
    EXPECT_EQ(lp.outputs[0].describe(), "f32[R, C] = [8, 4096]");
    CompiledStatement c = compile_statement(lp, 0);
    return detail::describe_plan(*c.compiled, c.shape);
  };
  EXPECT_EQ(described("x: f32[R, C]\nout = exp(x - max(x, axis=1)) / sum(exp(x - max(x, axis=1)), axis=1)"), golden);
  // A `let` is lowered again where it is read: the same plan.
  EXPECT_EQ(described("x: f32[R, C]\nlet e = exp(x - max(x, axis=1))\nout = e / sum(e, axis=1)"), golden);
  // softmax() spells out the same formula, over the last axis by default.
  EXPECT_EQ(described("x: f32[R, C]\nout = softmax(x)"), golden);
  EXPECT_EQ(described("x: f32[R, C]\nout = softmax(x, axis=-1)"), golden);
}

TEST(TextReduction, LayerNormReadsWeightsPerColumn) {
  LoweredProgram lp = lower_text("x: f32[R, C]\ngamma: f32[C]\nbeta: f32[C]\neps: f32 = 1e-5\n"
                                 "out = (x - mean(x, axis=1)) * rsqrt(var(x, axis=1) + eps) * gamma + beta");
  const LoweredReduction& r = lp.reductions[0];
  EXPECT_EQ(r.scope, ir::EpilogueScope::Element);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[R, C]");
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.inputs[1].first, "gamma");
  ASSERT_EQ(r.scalars.size(), 1u);
  EXPECT_EQ(r.scalars[0].name, "eps");
  ASSERT_TRUE(r.scalars[0].value.has_value());
  EXPECT_EQ(r.scalars[0].value->f, 1e-5);
  ASSERT_TRUE(r.plan.epilogue.has_value());
  EXPECT_EQ(r.plan.epilogue->inputs().size(), 3u);
  EXPECT_TRUE(lp.warnings.empty());
}

TEST(TextReduction, ValuesPerGroupCombineFreely) {
  std::string norm = plan_of("x: f32[N]\nn = sqrt(sum(x * x))");
  EXPECT_NE(norm.find("epilogue (once per result):"), std::string::npos) << norm;
  EXPECT_NE(norm.find("sqrt"), std::string::npos) << norm;
  LoweredProgram lp = lower_text("x: f32[R, C]\nb: f32[C]\nm = max(x, axis=0) - min(x, axis=0) + b");
  EXPECT_EQ(lp.reductions[0].scope, ir::EpilogueScope::Group);
  EXPECT_EQ(lp.reductions[0].plan.stages.size(), 2u);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[C]");
  // A reduction's argument reads earlier stages per group on every kind
  // (a column variance written out).
  lp = lower_text("x: f32[R, C]\nlet d = x - mean(x, axis=0)\nv = mean(d * d, axis=0)");
  EXPECT_EQ(lp.reductions.size(), 1u);
  EXPECT_EQ(lp.reductions[0].plan.stages.size(), 2u);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[C]");
}

TEST(TextReduction, StatementsSplitIntoKernels) {
  LoweredProgram lp = lower_text("x: f32[R, C]\ny: f32[R, C]\na = x * 2\nm = sum(y, axis=1)\n"
                                 "b = x + 4\nc = y - m");
  // Outputs in statement order; a and b form the elementwise kernel.
  ASSERT_EQ(lp.outputs.size(), 4u);
  EXPECT_EQ(lp.outputs[1].name, "m");
  EXPECT_EQ(lp.elementwise_outputs, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(ir::print(lp.program), "# a = x * 2; b = x + 4  (t.gk:3)\n"
                                   "kernel(x: f32[]; s0: i32 weak, s1: i32 weak) -> (a: f32[], b: f32[])\n"
                                   "  %0 = input x : f32\n"
                                   "  %1 = scalar s0 : i32\n"
                                   "  %2 = mul %0, %1 : ?\n"
                                   "  %3 = scalar s1 : i32\n"
                                   "  %4 = add %0, %3 : ?\n"
                                   "  a = %2\n"
                                   "  b = %4\n");
  // Inputs: the elementwise kernel's, then those only reductions read.
  ASSERT_EQ(lp.inputs.size(), 2u);
  EXPECT_EQ(lp.inputs[0].name, "x");
  EXPECT_EQ(lp.inputs[1].name, "y");
  // Reading m inlines sum(y, axis=1): c is a reduction broadcast back.
  ASSERT_EQ(lp.reductions.size(), 2u);
  EXPECT_EQ(lp.reductions[1].output, 3u);
  EXPECT_EQ(lp.reductions[1].scope, ir::EpilogueScope::Element);
  EXPECT_EQ(lp.outputs[3].describe(), "f32[R, C]");
}

TEST(TextReduction, MinAndMaxOfTwoAreElementwise) {
  LoweredProgram lp = lower_text("out = max(x, 1) + min(x, y)");
  EXPECT_TRUE(lp.reductions.empty());
  EXPECT_EQ(lp.program.outputs().size(), 1u);
  lp = lower_text("out = max(x) + min(x)");
  EXPECT_EQ(lp.reductions.size(), 1u);
}

// Reduction-only shapes take no place among the arrays' random seeds, so a
// one-liner's inputs are drawn as its C++ twin's.
TEST(TextReduction, RandomIndicesSkipResultShapes) {
  LoweredProgram lp = lower_text("s = sum(x)\nout = y * 2");
  ASSERT_EQ(lp.inputs.size(), 2u);
  EXPECT_EQ(lp.inputs[0].name, "y");
  EXPECT_EQ(lp.inputs[0].random_index, 1u);
  EXPECT_EQ(lp.inputs[1].name, "x");
  EXPECT_EQ(lp.inputs[1].random_index, 0u);
}

TEST(TextReduction, KernelNamesAvoidStageValues) {
  LoweredProgram lp = lower_text("r0: f32[N]\nr1: f32 = 2\ns = sum(r0 * r1)");
  const LoweredReduction& r = lp.reductions[0];
  EXPECT_EQ(r.inputs[0].first, "in_r0");
  EXPECT_EQ(r.scalars[0].name, "arg_r1");
  EXPECT_EQ(r.scalars[0].source, "r1");
}

TEST(TextReduction, UnreadLetsReadNothing) {
  LoweredProgram lp = lower_text("x: f32[N]\ny: f32[N]\nlet t = sum(y)\nout = x");
  ASSERT_EQ(lp.warnings.size(), 1u);
  EXPECT_EQ(lp.warnings[0], "t.gk:2: 'y' is declared but never read; it is not a kernel operand");
  EXPECT_TRUE(lp.reductions.empty());
}

TEST(TextReduction, DeclaredOutputsAndScalars) {
  LoweredProgram lp = lower_text("x: f32[R, C]\nm: f64[R]\nk: f32\nm = sum(x * k, axis=1)");
  EXPECT_EQ(lp.outputs[0].describe(), "f64[R]");
  EXPECT_EQ(lp.reductions[0].plan.epilogue.has_value(), true); // the cast to f64
  EXPECT_THROW(lp.check_scalars_bound(), Error);
  LowerOptions opts;
  opts.scalars["k"] = "0.5";
  lp = lower_text("x: f32[R, C]\nm: f64[R]\nk: f32\nm = sum(x * k, axis=1)", opts);
  EXPECT_NO_THROW(lp.check_scalars_bound());
}

TEST(TextReduction, Errors) {
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = sum(x, axis=2)", ErrorKind::Shape),
            "t.gk:2:19: error: axis 2 is out of range: 'x' is f32[R, C], which has 2 dimensions (axes -2..1)\n"
            "  out = sum(x, axis=2)\n"
            "                    ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nk: i32 = 1\nout = sum(x, axis=k)", ErrorKind::Type),
            "t.gk:3:19: error: the axis of sum() must be an integer literal, not 'k'\n"
            "  out = sum(x, axis=k)\n"
            "                    ^");
  EXPECT_EQ(lower_error("out = mean(x, 1.5)", ErrorKind::Type),
            "t.gk:1:15: error: the axis of mean() must be an integer literal, not '1.5'\n"
            "  out = mean(x, 1.5)\n"
            "                ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = sum(x, axis=1) + max(x, axis=0)"),
            "t.gk:2:36: error: every reduction of a statement reduces the same axis: 'max(x, axis=0)' "
            "reduces axis 0, but the first, 'sum(x, axis=1)', reduces axis 1\n"
            "  out = sum(x, axis=1) + max(x, axis=0)\n"
            "                                     ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = sum(x, axis=1) + max(x)"),
            "t.gk:2:24: error: every reduction of a statement reduces the same axis: 'max(x)' reduces "
            "every element, but the first, 'sum(x, axis=1)', reduces axis 1\n"
            "  out = sum(x, axis=1) + max(x)\n"
            "                         ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = sum(x, axs=1)"),
            "t.gk:2:14: error: sum() takes the keyword arguments 'axis' and 'keepdims', not 'axs'; did "
            "you mean 'axis'?\n"
            "  out = sum(x, axs=1)\n"
            "               ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = sum(x, keepdims=1)", ErrorKind::Type),
            "t.gk:2:23: error: keepdims of sum() is true or false, not '1'\n"
            "  out = sum(x, keepdims=1)\n"
            "                        ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = x - max(x, axis=0)"),
            "t.gk:2:9: error: 'max(x, axis=0)' is broadcast back over f32[R, C] here, which needs a "
            "reduction of the last axis, but it reduces axis 0\n"
            "  out = x - max(x, axis=0)\n"
            "          ^\n"
            "note: reduce axis=1 (each row is kept on chip), or give the statement one value per group");
  EXPECT_EQ(lower_error("x: f32[R, C]\nz: f32[R]\nout = sum(x * z, axis=1)", ErrorKind::Shape),
            "t.gk:3:13: error: shapes do not broadcast in '*': 'x' is f32[R, C], but 'z' is f32[R]\n"
            "  out = sum(x * z, axis=1)\n"
            "              ^\n"
            "note: sizes are compared by name until bound; bind them with --size");
  EXPECT_EQ(lower_error("x: f32[R, C]\ng: f32[C]\nout = sum(x * g, axis=0)", ErrorKind::Shape),
            "t.gk:3:15: error: 'g' is f32[C], but arrays read inside a reduction have the reduced "
            "array's shape, f32[R, C]\n"
            "  out = sum(x * g, axis=0)\n"
            "                ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\ng: f32[C]\nout = sum(x, axis=1) * g + x", ErrorKind::Shape),
            "(no error)"); // g per column: the value is per element of each row
  EXPECT_EQ(lower_error("x: f32[R, C]\nb: f32[R]\nout = x - mean(x, axis=1) * b", ErrorKind::Shape),
            "t.gk:3:29: error: 'b' is f32[R], but this statement's value has the reduced array's shape, "
            "f32[R, C], so its operands have that shape, or [C] (read per column of each row)\n"
            "  out = x - mean(x, axis=1) * b\n"
            "                              ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\ny: f32[N]\nout = sum(x, axis=1) + y", ErrorKind::Shape),
            "t.gk:3:22: error: shapes do not broadcast in '+': 'sum(x, axis=1)' is reduced to [R], but "
            "'y' is f32[N]\n"
            "  out = sum(x, axis=1) + y\n"
            "                       ^\n"
            "note: a reduction's value combines with arrays of the reduced shape, f32[R, C] (it is "
            "broadcast back over each row), or of the result's shape, [R]");
  EXPECT_EQ(lower_error("x: f32[R, C]\nout = sum(sum(x, axis=1), axis=0)"),
            "t.gk:2:11: error: sum() of a reduced value: 'sum(x, axis=1)' is reduced to [R]; a statement "
            "reduces its arrays once\n"
            "  out = sum(sum(x, axis=1), axis=0)\n"
            "            ^\n"
            "note: reduce the array itself over more axes in one reduction (e.g. every element), or "
            "compute the reduction's value and reduce it in a program of its own");
  EXPECT_EQ(lower_error("r: f32 = 2\nx: f32[N]\nout = sum(r * 2)"),
            "t.gk:3:13: error: sum() reduces an array, but 'r * 2' (a scalar)\n"
            "  out = sum(r * 2)\n"
            "              ^");
  EXPECT_EQ(lower_error("x: f32[N]\ny: f32[N]\nout = max(x, y, axis=0)"),
            "t.gk:3:14: error: max() of one array reduces it; give its axis as axis=...: max(x, y) of two "
            "is the elementwise maximum, which takes no keyword arguments\n"
            "  out = max(x, y, axis=0)\n"
            "               ^");
  EXPECT_EQ(lower_error("x: f32[R, C]\nm: f32[C]\nm = sum(x, axis=1)", ErrorKind::Shape),
            "t.gk:3:1: error: 'm' is declared f32[C], but its value 'sum(x, axis=1)' is reduced to [R]\n"
            "  m = sum(x, axis=1)\n"
            "  ^");
  EXPECT_EQ(lower_error("x: f32[N]\ny: f32[M]\nout = sum(x) + sum(y)", ErrorKind::Shape),
            "t.gk:3:16: error: every reduction of a statement reduces arrays of one shape: 'y' is f32[M], "
            "but the first, 'sum(x)', reduces f32[N]\n"
            "  out = sum(x) + sum(y)\n"
            "                 ^");
  EXPECT_EQ(lower_error("x: f32[N]\nout = sum(x) + m\nm = sum(x)"),
            "t.gk:2:16: error: 'm' is used before it is assigned on line 3\n"
            "  out = sum(x) + m\n"
            "                 ^");
  EXPECT_EQ(lower_error("out = sum(x, 1, axis=0)"),
            "t.gk:1:14: error: sum() is given two axes; a reduction reduces one axis or every element\n"
            "  out = sum(x, 1, axis=0)\n"
            "               ^");
  EXPECT_EQ(lower_error("out = softmax(x, keepdims=true)"),
            "t.gk:1:18: error: softmax() takes the keyword argument 'axis', not 'keepdims'\n"
            "  out = softmax(x, keepdims=true)\n"
            "                   ^");
  // A `let` with reductions is checked where it stands, even when unread.
  EXPECT_EQ(lower_error("x: f32[N]\nlet t = sum(x, axis=3)\nout = x", ErrorKind::Shape),
            "t.gk:2:21: error: axis 3 is out of range: 'x' is f32[N], which has 1 dimension (axes -1..0)\n"
            "  let t = sum(x, axis=3)\n"
            "                      ^");
}

} // namespace
} // namespace gpukit::text
