// lower: turns a parsed text program into the IR the C++ DSL would build for
// the same computation, with names resolved and shapes checked.
//
//   LowerOptions opts;
//   opts.sizes["N"] = 1000000;
//   LoweredProgram lp = lower(parse_program(text, "bs.gk"), opts);
//   lp.program;           // one elementwise kernel, outputs in statement order
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
//  * Every array of a program has one shape (the program is one elementwise
//    kernel); shapes are compared by their bound extents, or by name while
//    unbound.
// Reductions (sum, mean, softmax, ...) parse, and are rejected here until the
// IR has them.
#pragma once

#include "codegen/ir.hpp"
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

struct LoweredProgram {
  /// The program before any pass (infer_types, folding) runs; its label is
  /// the statements' text and where they came from.
  ir::Program program;
  /// Per IR input and output, in kernel-parameter order.
  std::vector<ArrayInfo> inputs;
  std::vector<ArrayInfo> outputs;
  /// Per IR scalar: its value; nullopt for a declared scalar given none.
  std::vector<std::optional<ir::Constant>> scalar_values;
  /// Every size the program names and its value (-1: unbound).
  std::map<std::string, int64_t> sizes;
  /// Things worth saying that do not stop the program ("x is declared but not used").
  std::vector<std::string> warnings;

  /// The element count every array shares; throws Error{Usage} naming the
  /// unbound sizes (and the --size flag that binds them) when some are not.
  int64_t elements() const;
  /// Throws Error{Usage} naming the first declared scalar without a value.
  void check_scalars_bound() const;
};

LoweredProgram lower(const ParsedProgram& parsed, const LowerOptions& options = {});

/// A literal as written on the command line (--scalar r=-0.5) as a constant
/// of `type`; throws Error{Type} when the value does not fit the type.
ir::Constant parse_scalar_value(std::string_view text, DType type, std::string_view name);

} // namespace gpukit::text
