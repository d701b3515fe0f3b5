// TuneBench: the GPU side of tune_program (dsl/tune.hpp): the rotating
// device buffers a kernel candidate runs on, its launches, CUDA-event
// timing, and the on-GPU check that its output equals the default's.
//
//   TuneBench bench(optimized, n, options);
//   bench.launch(default_kernel, grid, block, 0);  bench.keep_reference();
//   if (bench.verify(kernel, grid, block).empty()) t = bench.time(kernel, grid, block, ...);
//
// Inputs are random (seeded), identical in every set; the sets together
// exceed the L2 cache several times, so each timed launch reads from DRAM as
// a real one would. GPU only: the constructor throws Error{Unavailable} on
// the CPU fallback.
#pragma once

#include "codegen/ir.hpp"
#include "dsl/tune.hpp"
#include "runtime/allocator.hpp"

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpukit::rt {
struct Kernel;
}

namespace gpukit::detail {

/// The CUDA source of the poison-and-compare kernels (gk_tune_check_1, _2,
/// _4, _8 for elements of that many bytes).
std::string_view tune_check_source();

struct BenchTiming {
  double median_ms = 0;
  unsigned repetitions = 0;
  bool stopped_early = false;
};

class TuneBench {
public:
  TuneBench(const ir::Program& optimized, uint64_t n, const TuneOptions& options);
  ~TuneBench();
  TuneBench(const TuneBench&) = delete;
  TuneBench& operator=(const TuneBench&) = delete;

  unsigned sets() const { return static_cast<unsigned>(Sets.size()); }
  /// Bytes one launch reads (the inputs it reads) and writes.
  uint64_t bytes_per_launch() const { return BytesPerSet; }
  uint64_t buffer_bytes() const { return BytesPerSet * Sets.size(); }

  /// Enqueues one launch of `kernel` over set `set`.
  void launch(const rt::Kernel& kernel, unsigned grid, unsigned block, unsigned set);
  /// Waits for set 0's outputs (the default kernel's) and keeps a copy.
  void keep_reference();
  /// Empty when `kernel` writes what the reference holds (integers and
  /// bool bit for bit, floating point within 8 ulps of the type): poisons
  /// set 0's outputs, launches there and compares on the GPU. Otherwise
  /// says where and how they differ.
  std::string verify(const rt::Kernel& kernel, unsigned grid, unsigned block);
  /// The median of `repetitions` event-timed launches over rotating sets,
  /// after `warmup` untimed ones; stops after `check` launches when their
  /// median exceeds `give_up_ms` (0: never).
  BenchTiming time(const rt::Kernel& kernel, unsigned grid, unsigned block, unsigned warmup,
                   unsigned repetitions, unsigned check, double give_up_ms);

private:
  struct Set {
    std::vector<rt::Allocation> inputs, outputs;
    std::vector<uint64_t> slots; ///< the kernel's arguments, one 8-byte slot each
    std::vector<void*> args;
  };

  const rt::Kernel& check_kernel(unsigned element_bytes);
  /// Returns every buffer and event (the destructor, and a failed constructor).
  void release() noexcept;
  void allocate(uint64_t n, uint64_t sets, const TuneOptions& options,
                const std::vector<uint64_t>& scalar_bits);
  void run_check(unsigned output, bool poison);

  ir::Program Program;
  uint64_t N;
  uint64_t BytesPerSet = 0;
  std::vector<Set> Sets;
  std::vector<rt::Allocation> Reference;
  rt::Allocation Result; ///< mismatch count and first index
  std::vector<CUevent> Starts, Stops;
  unsigned NextSet = 0;
  std::vector<const rt::Kernel*> CheckKernels; ///< by log2(element bytes)
};

} // namespace gpukit::detail
