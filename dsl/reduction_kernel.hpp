// The engine behind reductions (dsl/reduce.hpp): builds a ReductionPlan
// from an assignment whose expression contains sum(), max(), mean(), ...,
// picks the kernel family from the reduced axis (full, row, column), caches
// the compiled variants per assignment type and launches them (or runs the
// CPU evaluator).
//
//   out = gpukit::sum(x * y);                        // full: a 0-d result
//   out = exp(x - max(x, 1)) / sum(exp(x - max(x, 1)), 1);   // one row kernel
//
// Internal to dsl/: users see it through assignments, eval() and inspect().
#pragma once

#include "codegen/reduction.hpp"
#include "dsl/expression_kernel.hpp"
#include "dsl/shape.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace gpukit::detail {

/// The collected scalar slot that carries a reduction's axis: an int64
/// constant whose floating view is this tag (a user's integer never has one).
inline constexpr double kAxisTag = -0x1.5p-1000;
inline ir::Constant axis_constant(int axis) { return {DType::Int64, axis, kAxisTag}; }
inline bool is_axis_constant(const ir::Constant& c) {
  return c.type == DType::Int64 && c.f == kAxisTag;
}

/// Called by a reduction node's build(): builds `inner` into a stage of the
/// plan being made and returns the scalar node "r<k>" that stands for its
/// value in the enclosing program.
ir::NodeId build_reduction(IrBuilder& b, ir::ReduceOp op, DType element, bool has_axis,
                           ir::NodeId (*inner)(IrBuilder&));

struct ReductionVariant;

/// The compiled variants of one reduction assignment type.
class ReductionVariants {
public:
  explicit ReductionVariants(const AssignmentType& type);
  ~ReductionVariants();
  const AssignmentType& type() const { return Type; }
  std::mutex Lock;
  std::vector<std::unique_ptr<ReductionVariant>> Variants;

private:
  const AssignmentType& Type;
};

/// Runs a reduction assignment through the engine (dsl/reduction_engine.hpp).
/// Error{Shape} when the output's element count is neither the reduced
/// count nor (a broadcast-back epilogue) the input's, or an operand's shape
/// fits none of the ways an operand is read (classify_operands).
void execute_reduction(ReductionVariants& variants, const AssignmentCall& call);

/// The plan (--dump) and the kernels' source, built but not run.
KernelInfo inspect_reduction(ReductionVariants& variants, const AssignmentCall& call);

/// The shape eval() gives a reduction over `leaves` with these scalars
/// (0-d for a full reduction; keepdims keeps the reduced axis as 1).
Shape reduction_result_shape(llvm::ArrayRef<const ArrayBase*> leaves,
                             llvm::ArrayRef<ir::Constant> scalars, bool keepdims);

} // namespace gpukit::detail
