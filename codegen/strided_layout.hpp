// Strided operands: how an elementwise kernel addresses arrays that are not
// dense, same-shape and row-major (views, broadcast operands, assignment
// into a view). Both back ends take the same description.
//
//   StridedArgs args;                       // out[R, C] = x[R, C] + b[C]
//   args.rank = 2; args.extents = {R, C};
//   args.inputs = {{C, 1}, {0, 1}};         // x, then b (stride 0: broadcast)
//   args.outputs = {{C, 1}};
//   StridedLayout layout = classify(args);  // compile-time part: {Strided, Unit}, {Broadcast, Unit}
//   CudaKernel k = emit_strided_cuda(program, options, layout);
//   evaluate(program, inputs, outputs, scalars, R * C, &args);   // CPU
//
// The iteration space is the output's shape (after the caller merged axes
// that every operand walks alike), row-major. Each operand's element is at
// sum(index[a] * stride[a]) from its pointer (which points at element 0, so
// negative strides work). What must be compiled differently (a term or
// not, a multiply or not) is the StridedLayout, part of the variant key; the
// extents and strides themselves are kernel arguments, so a new view of the
// same class never recompiles.
//
// Kernel ABI (after ir.hpp's inputs, outputs, scalars and n): the extents
// of axes 1..rank-1, then the stride of every Strided axis of every input,
// then of every output; each as `int` (or `long long` with index64).
#pragma once

#include "codegen/ir.hpp"

#include <llvm/ADT/SmallVector.h>

#include <array>
#include <cstdint>
#include <string>

namespace gpukit::codegen {

inline constexpr unsigned kMaxStridedRank = 4;

/// How an operand moves along one axis of the iteration space.
enum class AxisAccess : uint8_t {
  Broadcast, ///< stride 0: the same element all along the axis (no index term)
  Unit,      ///< stride 1 (index term without a multiply)
  Strided,   ///< any other stride, passed as a kernel argument
};

using AxisAccesses = std::array<AxisAccess, kMaxStridedRank>;
using AxisStrides = std::array<int64_t, kMaxStridedRank>;

/// The compile-time part: the rank and each operand's access per axis.
/// rank 0 means flat (every operand dense and the same shape): the
/// ordinary contiguous kernel.
struct StridedLayout {
  unsigned rank = 0;
  llvm::SmallVector<AxisAccesses, 4> inputs;  ///< per program input
  llvm::SmallVector<AxisAccesses, 2> outputs; ///< per program output

  bool flat() const { return rank == 0; }
  bool operator==(const StridedLayout&) const = default;
  /// "r2 in:SU,BU out:SU": deterministic, for kernel names and labels.
  std::string key() const;
};

/// The run-time part: the iteration space's extents and every operand's
/// strides in elements (the first `rank` values of each are used).
struct StridedArgs {
  unsigned rank = 1;
  AxisStrides extents{};
  llvm::SmallVector<AxisStrides, 4> inputs;  ///< per program input
  llvm::SmallVector<AxisStrides, 2> outputs; ///< per program output
};

/// The access of a stride: 0 -> Broadcast, 1 -> Unit, else Strided.
constexpr AxisAccess access_of(int64_t stride) {
  return stride == 0 ? AxisAccess::Broadcast : stride == 1 ? AxisAccess::Unit : AxisAccess::Strided;
}

/// The layout class of `args` (never flat: the caller decides flatness).
StridedLayout classify(const StridedArgs& args);

/// Whether the kernel needs 64-bit offsets: n, or the farthest element any
/// operand reaches, at or above 2^31.
bool strided_needs_index64(const StridedArgs& args);

} // namespace gpukit::codegen
