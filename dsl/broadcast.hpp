// Broadcasting: NumPy's shape rules for one assignment's operands, and the
// iteration space its kernel walks.
//
//   out = x + bias;          // x [R, C], bias [C]: bias repeats down the rows
//   out = x * scale_col;     // scale_col [R, 1]: repeats across the columns
//   auto y = eval(x + z);    // the shape is the broadcast of x's and z's
//
// Shapes align at their last axis; each pair of extents must be equal or
// one of them 1; a missing leading axis counts as 1. So a 0-d operand
// (Shape::scalar(), no axes) broadcasts with anything, stride 0 on every
// axis: `out = x - mean` with mean 0-d; and only 0-d operands make a 0-d
// result (a [1] operand keeps its axis, as in NumPy). The destination of an
// assignment must have the broadcast shape, or a shape the operands
// broadcast to (`out = b` fills every row of out with b).
//
// IterationSpace is what a launch needs: the output's shape with axes of
// extent 1 dropped and neighbouring axes merged where every operand walks
// them as one (so a dense transposed copy of [1, N] is flat, and a [R, C]
// broadcast add stays rank 2), each operand's strides in elements (0 on a
// broadcast axis), and whether everything is dense and same-shape (the flat,
// vectorizable kernel). Computed on every call: a few loops over <= 4 axes.
#pragma once

#include "codegen/strided_layout.hpp"
#include "dsl/array_base.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <optional>

namespace gpukit::detail {

struct AssignmentType;

/// The broadcast of `a` and `b`, or nullopt when they are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
/// Whether `from` broadcasts to exactly `to`.
bool broadcasts_to(const Shape& from, const Shape& to);

/// The shape of an expression (assignment type `type`, its array leaves and
/// scalars): the broadcast of its leaves' shapes. Error{Shape} naming both
/// operands and shapes when two are incompatible:
/// "cannot broadcast x [3, 4] with y [5] in `x + y` (...)".
Shape expression_shape(const AssignmentType& type, llvm::ArrayRef<const ArrayBase*> leaves,
                       llvm::ArrayRef<ir::Constant> scalars);

/// The iteration space of one call; slots are the outputs, then the leaves.
struct IterationSpace {
  /// Every operand dense, row-major and of the output's shape.
  bool flat = true;
  unsigned rank = 1;
  codegen::AxisStrides extents{};
  llvm::SmallVector<codegen::AxisStrides, 12> strides; ///< per slot
};

/// The iteration space of outputs `outputs` and leaves `leaves` (each leaf
/// broadcasts to the first output's shape: check that first).
void plan_iteration(llvm::ArrayRef<ArrayBase*> outputs, llvm::ArrayRef<const ArrayBase*> leaves,
                    IterationSpace& space);

} // namespace gpukit::detail
