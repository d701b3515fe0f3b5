// The CUDA back end: turns an optimized elementwise program into the source
// of one self-contained kernel (no #include) for NVRTC.
//
//   ir::Program p = ir::optimize(program);
//   CudaKernel k = emit_cuda(p, {.shape = {256, 2}, .vectorize = aligned});
//   rt.kernels().get({k.name, k.source});
//
// The kernel's parameters follow ir.hpp's order: inputs, outputs, scalars,
// then the element count n. Arrays are passed as pointers to their storage
// type (float16/bfloat16 as unsigned short bits, bool as unsigned char 0/1);
// scalars by value in their compute type (float16/bfloat16 scalars as a float
// holding the rounded value: see codegen/kernel_abi.hpp). The kernel is a
// grid-stride loop, so any grid size is correct; one thread handles
// pack_width * items_per_thread elements per iteration. Every output is
// computed from the inputs' old values: a kernel with several outputs loads
// all its inputs before its first store, so an output may be an input.
//
// Every decision about what an operation means on the GPU (and where it may
// differ from the CPU evaluator) is listed at the top of cuda_emitter.cpp.
// Reductions are not emitted here yet.
#pragma once

#include "codegen/ir.hpp"

#include <string>
#include <vector>

namespace gpukit::codegen {

/// The code-generation parameters an autotuner varies.
struct KernelShape {
  unsigned block_size = 256;     ///< threads per block (__launch_bounds__)
  unsigned items_per_thread = 1; ///< elements (or packs) per thread per loop iteration
};

struct EmitOptions {
  KernelShape shape;
  /// Load and store 16-byte packs. The caller guarantees that every input
  /// and output is contiguous and 16-byte aligned.
  bool vectorize = true;
  /// 64-bit element indices; needed when n >= 2^31 (see needs_index64).
  bool index64 = false;
  /// Mark array parameters __restrict__. The caller clears it when an
  /// output may share memory with an input (`assign(x, y + 1, z, x * 2)`):
  /// restrict would then promise the compiler something untrue.
  bool restrict_pointers = true;
};

/// The NVRTC options every generated kernel is compiled with (besides the
/// arch): "--fmad=false", so that a * b + c rounds twice as on the CPU
/// instead of being contracted into one fma.
inline const std::vector<std::string>& generated_kernel_options() {
  static const std::vector<std::string> options = {"--fmad=false"};
  return options;
}

struct CudaKernel {
  std::string name;   ///< the entry point, "ew_" + 8 hex digits
  std::string source; ///< complete CUDA source
  unsigned pack_width = 1; ///< elements per 16-byte pack; 1 when not vectorized
  /// NVRTC options the source must be compiled with (besides the arch).
  std::vector<std::string> nvrtc_options = generated_kernel_options();
};

/// The kernel for `optimized` (typed: run ir::optimize first). Throws
/// Error{Usage} for a program without outputs, a shape of zero, or an
/// unusable device function name; Error{Internal} for an untyped program.
CudaKernel emit_cuda(const ir::Program& optimized, const EmitOptions& options);

/// "ew_" + 8 hex digits of the program's structural hash mixed with the
/// options: the same program and options give the same name in every process.
std::string kernel_name(const ir::Program& optimized, const EmitOptions& options);

/// Elements per 16-byte pack: 16 / the largest element size among the
/// inputs the program reads and its outputs.
unsigned pack_width(const ir::Program& optimized);

/// Whether n elements need EmitOptions::index64: the 32-bit loop index must
/// not wrap when a grid stride (at most 2^31 threads) is added to it.
constexpr bool needs_index64(uint64_t n) { return n >= (uint64_t(1) << 31); }

} // namespace gpukit::codegen
