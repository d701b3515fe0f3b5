// lower: turns a parsed text program into the IR the C++ DSL would build for
// the same computation, with names resolved and shapes checked.
//
//   LowerOptions opts;
//   opts.sizes["N"] = 1000000;
//   LoweredProgram lp = lower(parse_program(text, "bs.gk"), opts);
//   lp.program;           // one elementwise kernel, outputs in statement order
//   lp.reductions;        // one ir::ReductionPlan per statement that reduces
//
// The language's semantics, as this file gives them:
//  * Inputs are the declared arrays (`x: f32[N]`) a statement reads; they
//    become kernel operands in the order they are first read, as the C++
//    DSL's leaves do. A program that declares no array at all (a one-liner
//    such as `out = 2*x + sin(y)`) reads every unknown name as an input of
//    type f32 and shape [N]; once a program declares an array, an unknown
//    name is an error that suggests the nearest known one.
//  * Every number or `true`/`false` in an expression becomes a weak scalar
//    parameter s0, s1, ... in the order written, exactly as a C++ scalar in
//    the DSL does: the kernel is the DSL's, and a changed literal only
//    changes an argument, never the compiled kernel. A literal inside a cast
//    (`f16(0.5)`) is a typed constant, folded by the pipeline.
//  * Declared scalars (`r: f32 = 0.02`, or a value from --scalar) are strong
//    scalar parameters of their declared type, named as declared.
//  * `name = expr` writes an output; `let name = expr` names a value used
//    later without writing it. An output declared with a type
//    (`out: f16[N]`) is stored as that type, otherwise as the expression's.
//  * The statements without a reduction form one elementwise kernel: every
//    array of it has one shape; shapes are compared by their bound extents,
//    or by name while unbound.
//
// Reductions: sum prod mean var min max argmin argmax any all (and amin,
// amax; std, logsumexp and softmax, spelled out as the formulas below),
// lowered to the ir::ReductionPlan the C++ DSL builds (dsl/reduce.hpp) and
// run by the same engine (dsl/reduction_engine.hpp):
//  * `sum(x)` reduces every element; `sum(x, axis=1)` or `sum(x, 1)` one
//    axis (negative axes count from the end); `keepdims=true` keeps it as an
//    extent of 1. min and max reduce with one argument or `axis=`:
//    `max(x, 1)` is the elementwise maximum with 1, as in the DSL. The axis
//    is an integer literal and takes a literal slot s<k> (after those of the
//    reduced expression) exactly as the DSL's axis takes a collected scalar
//    slot, so both front ends build the same kernels. Each statement with
//    reductions numbers its own slots from s0, and gives every literal its
//    own slot (as the DSL's reduction builder does: equal literals are not
//    merged there).
//  * A statement that contains a reduction (directly, or by reading a `let`
//    or output that does) is its own kernel(s): one plan. Reading another
//    statement's `let` or output inside it re-lowers that expression there,
//    as a C++ `auto` variable is re-read (CSE and the plan's de-duplication
//    merge repeats): a reduction statement never reads another kernel's
//    output from memory.
//  * Every reduction of a statement reduces the same axis of arrays of one
//    shape (the "main" shape). A reduction's value is one per group (row,
//    column, or the whole array). Combined with an operand of the main shape
//    (or of shape [cols]) it is broadcast back over the row: the statement
//    then has the main shape (`exp(x - max(x, axis=1))`, with or without
//    keepdims), which needs a reduction of the last axis. Combined only with
//    scalars, other reductions and operands of the result's shape, the
//    statement has the result's shape: the main shape without the reduced
//    axis (as 1 when any reduction says keepdims=true; a full reduction
//    gives a 0-d output), e.g. `n = sqrt(sum(x * x))`.
//  * Operands read inside a reduction, or by a statement of the main shape,
//    have the main shape, or [cols] in a row reduction (weights, biases:
//    `(x - mean(x, axis=1)) * g + b`); operands read only per group have
//    the result's shape (`sum(x, axis=1) + b`, b: [R]).
//  * A reduction of a reduced value (`sum(sum(x, axis=1))`) is an error: a
//    statement reduces its arrays once.
//  * std(x, ...) is sqrt(var(x, ...)); logsumexp(x, ...) is
//    max(x, ...) + log(sum(exp(x - max(x, ...)), ...)); softmax(x, axis=-1)
//    is exp(x - max(x, axis)) / sum(exp(x - max(x, axis)), axis).
#pragma once

#include "codegen/ir.hpp"
#include "codegen/reduction.hpp"
#include "dsl/text/ast.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpukit::text {

/// An array the caller supplies for an input (an .npy file): its type and
/// shape, checked against the declaration and used to bind sizes.
struct ArraySpec {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::string origin; ///< where it came from, for messages ("x.npy")
};

struct LowerOptions {
  /// --size N=1000
  std::map<std::string, int64_t> sizes;
  /// --scalar r=0.02: the value as written (a literal, maybe negated).
  std::map<std::string, std::string> scalars;
  /// --input x=x.npy
  std::map<std::string, ArraySpec> inputs;
};

/// An array of the program with its shape as declared and as bound.
struct ArrayInfo {
  /// The name in the program (the kernel parameter may differ: see
  /// is_reserved_kernel_name).
  std::string name;
  DType dtype = DType::Float32;
  std::vector<Dim> dims;
  /// Per dimension: the extent, or -1 while its size is unbound.
  std::vector<int64_t> extents;
  /// Random inputs: values uniform in [random_lo, random_hi), drawn with
  /// seed + random_index (the array's place among the program's arrays:
  /// declared ones in order, then undeclared ones in order of first use).
  double random_lo = 0.0, random_hi = 1.0;
  unsigned random_index = 0;

  bool bound() const;
  /// The element count; requires bound().
  int64_t elements() const;
  /// "f32[N]" or, once bound, "f32[N] = [1000]".
  std::string describe() const;
  /// "[1000]" or "[N]".
  std::string shape_string() const;
};

/// One statement that reduces: the plan the C++ DSL builds for the same
/// assignment, and what running it needs.
struct LoweredReduction {
  /// The stages and the epilogue (ir::set_epilogue); its label is the
  /// statement and where it came from.
  ir::ReductionPlan plan;
  /// The reduced array's shape (named after the reduced expression).
  ArrayInfo main;
  /// The reduced axis (0..rank-1), or nullopt: every element.
  std::optional<int> axis;
  bool keepdims = false;
  /// Element: the result has the main shape (reductions broadcast back over
  /// each row); Group: one value per group.
  ir::EpilogueScope scope = ir::EpilogueScope::Group;
  /// Its index in LoweredProgram::outputs.
  size_t output = 0;
  /// Per input the plan reads: its name in the plan and its index in
  /// LoweredProgram::inputs.
  std::vector<std::pair<std::string, size_t>> inputs;
  /// A scalar the plan takes: a literal s<k> or a declared scalar.
  struct Scalar {
    std::string name;   ///< in the plan
    std::string source; ///< in the program ("s<k>" for a literal)
    DType type = DType::Float32;
    std::optional<ir::Constant> value; ///< nullopt: declared without one
  };
  std::vector<Scalar> scalars;
  /// "`m = sum(x)` (t.gk:3)", for messages.
  std::string what;
};

struct LoweredProgram {
  /// The elementwise kernel (every statement without a reduction) before
  /// any pass (infer_types, folding) runs; its label is the statements'
  /// text and where they came from. No outputs when every statement reduces.
  ir::Program program;
  /// The inputs of `program`, in kernel-parameter order, then those only
  /// reductions read, in the order first read.
  std::vector<ArrayInfo> inputs;
  /// Every output, in statement order.
  std::vector<ArrayInfo> outputs;
  /// Per output of `program`: its index in `outputs`.
  std::vector<size_t> elementwise_outputs;
  /// Per IR scalar of `program`: its value; nullopt for a declared scalar given none.
  std::vector<std::optional<ir::Constant>> scalar_values;
  /// The statements that reduce, in statement order.
  std::vector<LoweredReduction> reductions;
  /// Every size the program names and its value (-1: unbound).
  std::map<std::string, int64_t> sizes;
  /// Things worth saying that do not stop the program ("x is declared but not used").
  std::vector<std::string> warnings;

  /// Throws Error{Usage} naming the unbound sizes (and the --size flag that
  /// binds them) when some are not; otherwise the element count of the
  /// elementwise kernel's outputs (0 when it has none).
  int64_t elements() const;
  /// Throws Error{Usage} naming the first declared scalar without a value.
  void check_scalars_bound() const;
};

LoweredProgram lower(const ParsedProgram& parsed, const LowerOptions& options = {});

/// A literal as written on the command line (--scalar r=-0.5) as a constant
/// of `type`; throws Error{Type} when the value does not fit the type.
ir::Constant parse_scalar_value(std::string_view text, DType type, std::string_view name);

} // namespace gpukit::text
