// The CPU back end: evaluates an optimized elementwise program on the host,
// with the emitted CUDA's semantics (codegen/element_semantics.hpp). It is
// GPUkit's fallback when there is no GPU, and the reference tests compare
// GPU results against.
//
//   ir::Program p = ir::optimize(program);
//   codegen::evaluate(p, {x.data(), y.data()}, {out.data()},
//                     {ir::Constant::of_float(DType::Float32, 2.0)}, n);
//
// Arrays are in their storage types (float16/bfloat16 as their 16-bit
// patterns, bool as one byte each); each scalar is converted to its
// ScalarParam's type with the Cast operation's semantics, as
// write_scalar_argument() does for the GPU. The work goes in chunks of 1024
// elements, node by node; n >= 2^20 elements are split over a few threads.
// An output may be the same array as an input (in place), not a shifted one.
// Device functions' host implementations may be called from several threads
// at once, so they must not keep state. With `strided` (strided_layout.hpp),
// element e of the row-major iteration space is at the operands' strided
// offsets instead (pointers at element 0): views and broadcast operands.
#pragma once

#include "codegen/ir.hpp"
#include "codegen/strided_layout.hpp"

#include <llvm/ADT/ArrayRef.h>

#include <cstddef>

namespace gpukit::codegen {

/// Computes `optimized`'s outputs for elements [0, n). Throws Error{Usage}
/// when the argument counts do not match the program, Error{Unavailable}
/// when a device function it calls has no host implementation, and
/// Error{Internal} for an untyped program.
void evaluate(const ir::Program& optimized, llvm::ArrayRef<const void*> inputs,
              llvm::ArrayRef<void*> outputs, llvm::ArrayRef<ir::Constant> scalars, size_t n,
              const StridedArgs* strided = nullptr);

} // namespace gpukit::codegen
