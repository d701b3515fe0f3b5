// The CUDA back end for strided operands (codegen/strided_layout.hpp): views,
// broadcast operands and assignment into a view. Contiguous same-shape
// operands go to emit_cuda (codegen/cuda_emitter.hpp) and its vectorized loops.
//
//   StridedLayout layout = classify(args);                 // part of the variant key
//   CudaKernel k = emit_strided_cuda(optimized, options, layout);
//   // launch: ir.hpp's parameters, then strided_layout.hpp's extents and strides
//
// The kernel is a grid-stride loop over the output's elements in row-major
// order. Each thread splits its first index and the grid stride into
// per-axis digits once (the only divisions); every iteration then adds the
// step digit by digit with a carry, so the loop body computes offsets with
// multiplies and adds alone. Stride-0 axes add no term and unit strides no
// multiply. No packs (options.vectorize and items_per_thread are ignored).
#pragma once

#include "codegen/cuda_emitter.hpp"
#include "codegen/strided_layout.hpp"

namespace gpukit::codegen {

/// The strided kernel of `optimized` for `layout` (not flat; one access
/// list per program input and output). Throws like emit_cuda, and
/// Error{Internal} when the layout does not fit the program.
CudaKernel emit_strided_cuda(const ir::Program& optimized, const EmitOptions& options,
                             const StridedLayout& layout);

} // namespace gpukit::codegen
