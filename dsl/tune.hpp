// Autotuning of elementwise kernels: measure the configurations of
// codegen/tuning_space.hpp on the GPU, keep the fastest one that computes the
// same answer as the heuristic default, and store it in the tuning database
// (runtime/tuning_database.hpp) so later processes launch it without timing.
//
//   TuneReport r = gpukit::tune(out, 2.0f * x + sin(y));         // at out's size
//   llvm::outs() << gpukit::format_tune_table(r);                 // candidates, winner, default
//   auto reports = gpukit::tune(out, 2.0f * x + sin(y), {1 << 20, 1 << 26});
//
// Measuring: every kernel shape the space keeps is compiled first, in
// parallel threads; each candidate is verified against the default's output
// (integers bit for bit, floating point within a few ulps), warmed up, then
// timed with CUDA events over rotating input buffers that together exceed
// the L2 cache; the median is its time, and a candidate clearly slower than
// the best so far stops early. Grids (launch-only) are tried for the fastest
// few shapes. The winner replaces the default only when it is faster by
// min_gain, in the search and again head to head in interleaved rounds, so
// a tuned kernel is never slower than the default.
//
// Using the answers: tuned_launch() is what the expression engine and the
// CLI call before emitting a kernel; GPUKIT_TUNE (off | cached | on) says
// whether it reads the database and whether a miss tunes on the spot.
// Without a GPU, tuning throws Error{Unavailable} naming the reason and
// tuned_launch() returns the heuristic.
#pragma once

#include "codegen/tuning_space.hpp"
#include "dsl/assign.hpp"
#include "dsl/tuned_launch.hpp"
#include "runtime/tuning_database.hpp"

#include <llvm/ADT/ArrayRef.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <source_location>
#include <string>
#include <vector>

namespace gpukit {

struct TuneOptions {
  unsigned warmup = 3;            ///< untimed launches before timing
  unsigned repetitions = 15;      ///< timed launches per candidate; the median counts
  unsigned early_check = 5;       ///< after this many, a clearly slower candidate stops
  double early_stop_ratio = 1.5;  ///< "clearly slower": this times the best median so far
  unsigned launch_finalists = 3;  ///< fastest kernel shapes whose grid variants are tried
  double time_budget_s = 8.0;     ///< no new candidate is measured after this (compiles count)
  double min_gain = 0.02;         ///< the winner must beat the default by this fraction
  unsigned compile_threads = 0;   ///< parallel NVRTC compiles; 0: the hardware's (at most 16)
  bool verify = true;             ///< check every candidate's output against the default's
  bool store = true;              ///< write the answer to the database
  bool aligned = true;            ///< tune for 16-byte aligned operands (vector packs allowed)
  uint64_t seed = 1;              ///< for the random inputs
  /// Values of the program's scalars by name; others get 3 (integers), 0.5
  /// (floating point) or true.
  std::map<std::string, ir::Constant> scalars;
  /// Where answers go; nullptr: rt::TuningDatabase::process().
  rt::TuningDatabase* database = nullptr;
};

/// A configuration the space's constraints removed before compiling.
struct TunePruned {
  codegen::TuningConfig config;
  std::string description; ///< as TuneCandidate::description
  std::string constraint;  ///< "registers", "alignment", ...
  std::string reason;
};

/// One configuration tried (or not) and what it gave.
struct TuneCandidate {
  codegen::TuningConfig config;
  std::string description; ///< "block=256 ipt=2 vec=4 grid=4xSM"
  std::string kernel;      ///< its entry point, "ew_1a2b3c4d"
  unsigned grid = 0;       ///< blocks launched at the tuned size
  bool measured = false;
  double median_ms = 0;
  double gbs = 0;          ///< bytes read and written per second
  unsigned repetitions = 0;
  bool stopped_early = false;
  bool is_default = false;
  bool is_winner = false;
  /// Why it has no time: a compile error, a verification failure, or
  /// "not measured: ..." (the budget, not a finalist shape).
  std::string problem;
};

struct TuneReport {
  std::string kernel;   ///< the default configuration's entry point
  std::string label;    ///< the expression
  uint64_t n = 0;
  rt::TuningKey key;
  std::string device;   ///< "NVIDIA H100 80GB HBM3 (sm_90, driver 13000)"
  uint64_t bytes_per_launch = 0;
  unsigned buffer_sets = 0;     ///< rotating input/output sets
  uint64_t buffer_bytes = 0;    ///< their total size
  uint64_t space_size = 0;      ///< points in the full space
  std::vector<TunePruned> pruned;
  /// Every candidate the constraints kept; the measured ones fastest first,
  /// then the rest in enumeration order.
  std::vector<TuneCandidate> candidates;
  unsigned kernels_compiled = 0;
  double compile_s = 0, measure_s = 0, wall_s = 0;
  /// A winner other than the default is re-timed against it in interleaved
  /// rounds; these are the medians (0 when there was no such winner).
  double confirm_default_ms = 0, confirm_winner_ms = 0;
  bool stored = false;
  std::string database;          ///< the file, or why it was not written
  std::vector<std::string> notes;

  const TuneCandidate& winner() const;
  const TuneCandidate& default_candidate() const;
  /// The default's time over the winner's (1.0: the default won), from the
/// head-to-head confirmation when there was one.
  double speedup() const;
};

/// Tunes the elementwise kernel of `program` (optimised here) for `n`
/// elements on the runtime's GPU, and stores the answer. Throws
/// Error{Unavailable} "tuning needs a GPU: <why>" on the CPU fallback,
/// Error{Usage} for n == 0, Error{Compile} when the default kernel does
/// not compile.
TuneReport tune_program(const ir::Program& program, uint64_t n, const TuneOptions& options = {});
/// One report per size.
std::vector<TuneReport> tune_program(const ir::Program& program, llvm::ArrayRef<uint64_t> sizes,
                                     const TuneOptions& options = {});

/// The candidates table `gpukit tune` prints: config, time, GB/s, % of
/// best, the winner and the default marked, then what was pruned and why.
std::string format_tune_table(const TuneReport& report);

// --- The C++ front end ---------------------------------------------------------------

namespace detail {

/// The program an assignment's kernel variant is built from (the expression
/// engine's operand layout and label), before optimisation.
ir::Program assignment_program(const AssignmentType& type, const AssignmentCall& call);

} // namespace detail

/// Tunes the kernel of `out = e` at each of `sizes` (out's size when
/// empty); the arrays' values are not used or changed.
template <typename T, typename E>
std::vector<TuneReport> tune(Array<T>& out, const E& e, std::initializer_list<uint64_t> sizes,
                             const TuneOptions& options = {},
                             std::source_location where = std::source_location::current()) {
  auto node = detail::target_node(e);
  ir::Program program = detail::with_operands(
      where,
      [](detail::KernelVariants& v, const detail::AssignmentCall& c) {
        return detail::assignment_program(v.type(), c);
      },
      detail::Target<T, decltype(node)>{&out, &node});
  std::vector<uint64_t> n(sizes);
  if (n.empty())
    n.push_back(static_cast<uint64_t>(out.size()));
  return tune_program(program, n, options);
}

/// Tunes the kernel of `out = e` at out's size.
template <typename T, typename E>
TuneReport tune(Array<T>& out, const E& e, const TuneOptions& options = {},
                std::source_location where = std::source_location::current()) {
  return tune(out, e, {}, options, where).front();
}

} // namespace gpukit
