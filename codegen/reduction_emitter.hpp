// The CUDA back end of reductions (codegen/reduction.hpp): the kernels that
// compute a ReductionPlan over a row-major [outer, extent, inner] view.
//
//   ReductionKernels ks = emit_reduction(plan, {.kind = ReductionKind::Row, .row_length = 4096});
//   for (const ReductionKernel& k : ks.kernels) rt.kernels().get({k.cuda.name, k.cuda.source, ...});
//
// Three families:
//  * Full ([1, n, 1]): per stage, a grid-stride kernel accumulating the
//    fused body over 16-byte packs into one partial per block (warp
//    shuffles, then the warps' values in a fixed order), and a one-block
//    kernel reducing the partials in a fixed order: deterministic.
//  * Column ([outer, rows, inner], inner > 1): per stage, blocks of 32
//    lanes x 8 row groups; a lane owns a 16-byte pack of adjacent columns
//    (one column when inner is not a multiple of the pack width) with 4
//    loads in flight, the row groups are combined in order in shared
//    memory, and the row slices are added in a fixed order: by the last
//    block of each column block (one stage, no epilogue: one kernel), or
//    by a second kernel.
//  * Row ([rows, cols, 1]): one kernel for every stage and the epilogue:
//    one block per row; the row's packs are loaded once into registers when
//    cols <= 32 packs per thread (cached), or re-read per stage otherwise.
//
// Kernel parameters, in order: the body inputs (storage pointers), the
// user's scalars, a pointer per earlier stage value read (gk_r<k>), the
// destination, then `long long outer, extent, inner`. Finalize kernels take
// (partials, destination, long long groups, long long parts, long long count).
#pragma once

#include "codegen/cuda_emitter.hpp"
#include "codegen/reduction.hpp"

#include <string>
#include <vector>

namespace gpukit::codegen {

enum class ReductionKind { Full, Row, Column };

struct ReductionEmitOptions {
  ReductionKind kind = ReductionKind::Full;
  unsigned block_size = 256;
  /// Full and Row: load 16-byte packs (inputs 16-byte aligned; Row also
  /// needs the row length to be a multiple of the pack width).
  bool vectorize = true;
  /// Row: the row length, compiled into the kernel.
  long long row_length = 0;
  /// Row: inputs (by name) of shape [cols], read at the column index of
  /// every row (a weight or bias broadcast over the rows).
  std::vector<std::string> column_inputs;
  /// Column: one kernel where the plan allows it (one stage, no epilogue,
  /// not argmin/argmax): the last block of each column block adds the row
  /// slices, counting blocks in `counters` (one per column block, zero
  /// before the launch and left zero after it).
  bool fuse_column = true;
};

/// What a kernel parameter receives from the launcher.
struct ReductionParam {
  enum class Kind { Input, Scalar, StageValue, Destination, Partials, Counters, Geometry };
  Kind kind;
  std::string name; ///< Input/Scalar: the program's name; StageValue: "r<k>"
  DType type = DType::Float32;
};

struct ReductionKernel {
  /// Fused: a Column plan's partial pass whose last block per column block
  /// also combines the slices (no Finalize kernel).
  enum class Role { Partial, Finalize, Row, Fused };
  CudaKernel cuda;
  Role role;
  unsigned stage = 0; ///< Partial/Finalize: the stage it computes
  std::vector<ReductionParam> params;
};

struct ReductionKernels {
  std::vector<ReductionKernel> kernels; ///< Row: one; Full/Column: two per stage
  unsigned pack_width = 1;
};

/// The kernels for `plan`. Throws Error{Usage} for an epilogue outside a
/// Row reduction or a block size
/// outside 32..1024 that is not a multiple of 32.
ReductionKernels emit_reduction(const ir::ReductionPlan& plan, const ReductionEmitOptions& options);

/// Column reductions of [outer, extent, inner]: the threads per outer slice
/// and row slice (inner / width when inner is a multiple of the pack width,
/// else inner), the column blocks they make (32 lanes each), and the row
/// slices for `sms` multiprocessors; the grid is blocks x outer x splits.
/// `width` is ReductionKernels::pack_width.
unsigned column_threads(long long inner, unsigned width);
unsigned column_blocks(long long inner, unsigned width);
unsigned column_splits(long long outer, long long extent, long long inner, unsigned sms, unsigned width,
                       bool one_kernel = false);
/// The grid of a Full reduction.
unsigned full_grid(long long n, unsigned pack_width, unsigned block_size, unsigned sms);

} // namespace gpukit::codegen
