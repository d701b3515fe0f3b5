// The reduction engine shared by both front ends: the geometry of a
// reduction, how its operands are read, its kernels compiled for that
// geometry, and one run on the GPU or the CPU fallback. The C++ DSL
// (dsl/reduction_kernel.cpp) and the text language (dsl/text) build an
// ir::ReductionPlan each their own way and hand it here.
//
//   ReductionShape g = reduction_shape(Shape{rows, cols}, /*axis=*/1, "softmax");
//   ReductionOperands ops = classify_operands(plan, g, {{"x", x.shape()}}, out_shape, "softmax");
//   auto compiled = compile_reduction(plan, g, ops, /*aligned=*/true, runtime.on_gpu());
//   run_reduction(*compiled, g, [&](const std::string& n) { return address_of(n); },
//                 [&](const std::string& n) { return scalar_named(n); }, out.address());
//
// Internal to dsl/: users see it through assignments, eval(), inspect() and
// `gpukit run|dump`.
#pragma once

#include "codegen/reduction.hpp"
#include "codegen/reduction_emitter.hpp"
#include "dsl/shape.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::rt {
struct Kernel;
}

namespace gpukit::detail {

/// The reduced data as a row-major [outer, extent, inner] view of `main`,
/// reduced over `extent`: Full is [1, size, 1], Row (last axis) [rows,
/// cols, 1], Column (a leading axis) [outer, rows, inner].
struct ReductionShape {
  codegen::ReductionKind kind = codegen::ReductionKind::Full;
  long long outer = 1, extent = 0, inner = 1;
  Shape main;
  /// The reduced axis (0..rank-1), or -1 for every element.
  int axis = -1;

  long long groups() const { return outer * inner; }
};

/// Reducing `main` over `axis` (negative counts from the end; nullopt:
/// every element). Error{Shape} naming `what` when the axis is out of range.
ReductionShape reduction_shape(const Shape& main, std::optional<int> axis, std::string_view what);

/// The shape of the result: the main shape without the reduced axis (with
/// keepdims: that axis as 1); a 0-d shape for a full reduction.
Shape reduced_shape(const ReductionShape& g, bool keepdims);

/// How the result is laid out, decided by the output's element count: one
/// value per group, or (a Row reduction whose epilogue reads the row's
/// elements: softmax) one per element of the reduced array.
enum class ResultScope { Group, Element };

/// How each operand of the plan is read, found from the operands' shapes.
struct ReductionOperands {
  ResultScope scope = ResultScope::Group;
  /// Inputs (by plan name) of shape [cols], read at the column index of
  /// every row of a Row reduction (a weight or bias).
  std::vector<std::string> column_inputs;
};

/// An operand of a reduction: its name in the plan and its shape.
struct NamedShape {
  std::string name;
  Shape shape;
};

/// Checks the operands and the output against the geometry and says how
/// each is read. An operand has the main shape, or [cols] (Row: read per
/// column), or, read only by a per-group epilogue (`out += sum(x, 1)`,
/// `sqrt(sum(x * x))`), the result's shape. The output holds one value per
/// group, or (an epilogue over the row: Row only) the main shape.
/// Error{Shape} naming `what`, the operand and both shapes otherwise.
ReductionOperands classify_operands(const ir::ReductionPlan& plan, const ReductionShape& g,
                                    llvm::ArrayRef<NamedShape> operands, const Shape& output,
                                    std::string_view what);

/// A plan compiled for one geometry family: its kernels' source and, on the
/// GPU, the loaded kernels.
struct FusedCounters;

struct CompiledReduction {
  CompiledReduction();
  ~CompiledReduction();
  ir::ReductionPlan plan;
  codegen::ReductionEmitOptions options;
  codegen::ReductionKernels kernels;
  std::vector<const rt::Kernel*> loaded;
  bool on_gpu = false;
  /// A fused column kernel's block counters, one zeroed array per launch
  /// stream (launches on one stream never overlap; each leaves them zero).
  std::unique_ptr<FusedCounters> counters;
};

/// Emits (and on the GPU compiles and loads, through the kernel cache) the
/// kernels of `plan` for `g`: a Row plan is compiled for its row length, a
/// Full or Column one for any size. `aligned`: every operand and the output
/// are 16-byte aligned (packed loads). Each kernel goes to GPUKIT_DUMP.
std::unique_ptr<CompiledReduction> compile_reduction(ir::ReductionPlan plan, const ReductionShape& g,
                                                     const ReductionOperands& operands, bool aligned,
                                                     bool on_gpu);

/// Whether a variant compiled for `compiled_for` serves `g` too.
bool same_family(const ReductionShape& compiled_for, const ReductionShape& g);

/// Runs `c` over `g`: `input(name)` gives each plan input's address (a
/// device address on the GPU, a host pointer on the CPU fallback),
/// `scalar(name)` each user scalar's value, `destination` the output's
/// address. On the GPU the kernels are only enqueued (partials live in
/// pool workspace freed stream-ordered). Error{Usage} for argmin/argmax
/// over an empty axis. Nothing runs when there are no groups.
void run_reduction(const CompiledReduction& c, const ReductionShape& g,
                   llvm::function_ref<uint64_t(const std::string&)> input,
                   llvm::function_ref<ir::Constant(const std::string&)> scalar, uint64_t destination,
                   std::string_view what);

/// The plan and the kernels, for --dump and inspect(): the plan's IR, then
/// each kernel's role and source.
std::string describe_plan(const CompiledReduction& c, const ReductionShape& g);

} // namespace gpukit::detail
