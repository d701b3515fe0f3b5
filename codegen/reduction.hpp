// Reductions in the IR: a ReductionPlan is one or more ReduceStages, each an
// elementwise Program whose single output is the value reduced, plus an
// optional epilogue that uses the reduced values per row (reduce-then-
// broadcast fusion: softmax, layernorm). The elementwise IR (ir.hpp) is left
// as it is: a reduction wraps it instead of adding nodes to it.
//
//   ir::ReductionPlan plan;
//   unsigned r = ir::add_stage(plan, ir::ReduceOp::Sum, body);  // body: out = x * y
//   // the value of stage r is the scalar "r<r>" in later stages and the epilogue
//
// Geometry is decided at run time: the data are a row-major [outer, extent,
// inner] view and the reduction runs over `extent`. A full reduction is
// [1, n, 1], a row (last-axis) reduction [rows, cols, 1], a column
// (leading-axis) reduction [1, rows, cols].
//
// Semantics (the CPU evaluator and the CUDA kernels agree; docs in
// codegen/reduction.cpp): see accumulator_type() and result_type().
#pragma once

#include "codegen/ir.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::ir {

enum class ReduceOp : uint8_t { Sum, Prod, Min, Max, Mean, Var, ArgMin, ArgMax, Any, All };

/// "sum", "prod", ..., "argmax", "any", "all".
std::string_view reduce_op_name(ReduceOp op);

/// The type a reduction of elements of type `element` returns:
/// sum/prod: int64 for bool and integers, the element type for floating;
/// min/max: the element type; mean/var: float_type_for(element);
/// argmin/argmax: int64; any/all: bool.
DType reduce_result_type(ReduceOp op, DType element);

/// The type the reduction accumulates in: float32 for float16, bfloat16 and
/// float32 (and for mean/var of integers), float64 for float64, int64 for
/// integer and bool sums and products (wrapping modulo 2^64), the compute
/// type for min/max and argmin/argmax, bool for any/all.
DType reduce_accumulator_type(ReduceOp op, DType element);

/// The type a stage's body must produce: the accumulator type (the body's
/// output is converted to it before it is combined).
DType reduce_body_type(ReduceOp op, DType element);

/// One reduction over the reduced axis. `body` has exactly one output (of
/// reduce_body_type), named "v"; its scalars named "r<k>" are the values of
/// earlier stages for the same group (row, column or the whole array).
struct ReduceStage {
  ReduceOp op;        ///< never Var (add_stage lowers it to two Means)
  Program body;       ///< optimized
  DType element;      ///< the type of the user's expression
  DType result;       ///< the type the stage's value is kept in
};

/// What an epilogue is evaluated for: every element of the reduced rows
/// (softmax: x / r1; Row plans only), or once per group (a norm:
/// sqrt(r0); an update: out + r0), reading operands of the result's shape.
enum class EpilogueScope : uint8_t { Element, Group };

struct ReductionPlan {
  std::vector<ReduceStage> stages;
  /// An elementwise program reading the stages' values as scalars "r<k>";
  /// its single output is the result. Absent: the result is the last
  /// stage's value.
  std::optional<Program> epilogue;
  EpilogueScope epilogue_scope = EpilogueScope::Element;
  std::string label;
};

/// Appends the stages computing `op` over the value of `body`'s single
/// output (an elementwise program, not yet optimized; its type is the
/// user's element type). var becomes mean, then the mean of the squared
/// deviation (two passes, ddof = 0). Returns the index k of the stage whose
/// value is the reduction ("r<k>").
unsigned add_stage(ReductionPlan& plan, ReduceOp op, const Program& body, DType element);

/// Completes `plan` from `top`, the program of the whole assigned
/// expression in which reduction k is the scalar "r<k>": no epilogue when
/// `top` is just the last stage's value in its type, otherwise `top`,
/// optimized, becomes the epilogue. Both front ends finish a plan so.
void set_epilogue(ReductionPlan& plan, const Program& top);

/// The name of stage k's value inside later programs: "r<k>".
std::string stage_value_name(unsigned k);

/// Whether `name` is a stage value's name (r<k>).
bool is_stage_value_name(std::string_view name);

/// Whether `program` reads stage values (scalars named r<k>).
bool reads_stage_values(const Program& program);

/// The deterministic structural hash of a plan (labels excluded).
uint64_t structural_hash(const ReductionPlan& plan);

/// A readable dump of the plan: each stage's op and IR, then the epilogue.
std::string print(const ReductionPlan& plan);

} // namespace gpukit::ir
