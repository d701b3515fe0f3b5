// tuned_launch: how an elementwise kernel variant is emitted and launched —
// the autotuner's stored answer for it when there is one, else the
// heuristic — and why, for --explain. The expression engine and the text
// front end call it once per kernel variant, before emitting.
//
//   TunedLaunch l = tuned_launch(optimized, n, aligned);
//   CudaKernel k = emit_cuda(optimized, l.emit_options(index64));
//   rt.launch(kernel, {l.grid(n, k.pack_width), l.config.shape.block_size}, args);
//
// GPUKIT_TUNE: off (the heuristic; no file is read), cached (the default:
// a stored answer for this kernel, dtype, device, driver and size bucket,
// else the heuristic), on (as cached, but a miss tunes on the spot and
// stores the answer). Lookups read the database file once per process;
// after that a lookup is a map search. dsl/tune.hpp measures and stores.
#pragma once

#include "codegen/ir.hpp"
#include "codegen/tuning_space.hpp"
#include "runtime/tuning_database.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gpukit {

namespace rt {
struct DeviceInfo;
}

/// Where a launch configuration came from.
enum class LaunchSource {
  Heuristic,  ///< no usable tuned entry (or GPUKIT_TUNE=off, or no GPU)
  TunedEntry, ///< read from the tuning database
  TunedNow,   ///< GPUKIT_TUNE=on: measured on first use, then stored
};
std::string_view to_string(LaunchSource source);

/// The launch configuration of one elementwise kernel variant.
struct TunedLaunch {
  codegen::ElementwiseConfig config;
  LaunchSource source = LaunchSource::Heuristic;
  /// Why: "GPUKIT_TUNE=off", "no tuned entry for ...", "<file>, measured at n = ...".
  std::string reason;
  /// The device's limits the grid is computed with.
  codegen::TargetLimits limits;

  codegen::EmitOptions emit_options(bool index64) const { return config.emit_options(index64); }
  /// Blocks for n elements with the kernel's pack width (CudaKernel::pack_width).
  unsigned grid(uint64_t n, unsigned pack_width) const {
    return codegen::elementwise_grid(config, n, pack_width, limits);
  }
  /// One line for --explain: "block 256, 1 item/thread, vectorized, grid
  /// exact cover capped at 4 waves (heuristic: no tuned entry for ...)".
  std::string explain() const;
};

/// The configuration to emit and launch `optimized` with for n elements on
/// the runtime's device. `aligned`: every operand is 16-byte aligned and
/// contiguous (the variant may vectorize). Never throws for a missing,
/// corrupt or stale database: the heuristic is used and the reason says why.
TunedLaunch tuned_launch(const ir::Program& optimized, uint64_t n, bool aligned);
/// The same with an explicit mode, database and device (nullptr: no GPU,
/// for the reason given), for tests and tools.
TunedLaunch tuned_launch(const ir::Program& optimized, uint64_t n, bool aligned, rt::TuneMode mode,
                         rt::TuningDatabase& database, const rt::DeviceInfo* device,
                         std::string_view no_gpu_reason = "no GPU");

/// What a kernel variant's cache key needs so each size bucket gets its own
/// launch configuration: 0 while tuned answers cannot apply (GPUKIT_TUNE=off,
/// or an empty database under cached), else 1 + the size bucket of n.
uint8_t variant_size_bucket(uint64_t n);

/// The database key of `optimized` at n elements on `device`.
rt::TuningKey elementwise_tuning_key(const ir::Program& optimized, uint64_t n, bool aligned,
                                     const rt::DeviceInfo& device);
/// The limits of `device` (codegen's TargetLimits from the runtime's DeviceInfo).
codegen::TargetLimits target_limits(const rt::DeviceInfo& device);

} // namespace gpukit
