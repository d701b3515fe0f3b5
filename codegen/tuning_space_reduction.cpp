// The reduction family of codegen/tuning_space.hpp, declared ahead of the
// reduction emitter: block size, items per thread, one or two stages.
#include "codegen/tuning_space.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::codegen {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

} // namespace

TuningConfig ReductionConfig::to_config() const {
  return {{"block", block_size}, {"ipt", items_per_thread}, {"stages", stages}};
}

std::optional<ReductionConfig> ReductionConfig::from_config(const TuningConfig& config) {
  std::optional<int64_t> block = config.get("block"), ipt = config.get("ipt"),
                         stages = config.get("stages");
  if (!block || !ipt || !stages || *block < 32 || *block > 1024 || *block % 32 != 0 || *ipt < 1 ||
      *ipt > 64 || (*stages != 1 && *stages != 2))
    return std::nullopt;
  return ReductionConfig{static_cast<unsigned>(*block), static_cast<unsigned>(*ipt),
                         static_cast<unsigned>(*stages)};
}

ReductionConfig heuristic_reduction_config(const ReductionProblem& problem, const TargetLimits& limits) {
  ReductionConfig c;
  c.block_size = 256;
  c.items_per_thread = 4;
  bool one_pass = problem.length <= uint64_t(c.block_size) * c.items_per_thread;
  bool rows_fill_gpu = problem.rows >= 2ull * limits.sm_count;
  c.stages = one_pass || rows_fill_gpu ? 1 : 2;
  return c;
}

TuningSpace reduction_space(const ReductionProblem& problem, const TargetLimits& limits) {
  TuningSpace space(std::string(kReductionFamily), kReductionSpaceVersion);
  space.add_dimension({"block", "threads per block", {64, 128, 256, 512, 1024}});
  space.add_dimension({"ipt", "elements each thread accumulates per pass", {1, 2, 4, 8}});
  space.add_dimension({"stages", "1: a block per row; 2: partials, then a combining kernel", {1, 2}});
  auto typed = [](const TuningConfig& c) { return *ReductionConfig::from_config(c); };

  space.add_constraint("shared memory", [problem, limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    // One partial per warp, combined by the first warp.
    ReductionConfig r = typed(c);
    uint64_t bytes = uint64_t(r.block_size / 32) * problem.accumulator_bytes;
    if (bytes <= limits.shared_bytes_per_block)
      return std::nullopt;
    return fmt::format("{} bytes of warp partials exceed {} bytes of shared memory per block", bytes,
                       limits.shared_bytes_per_block);
  });
  space.add_constraint("registers", [problem, limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    ReductionConfig r = typed(c);
    unsigned per_value = (std::max(problem.element_bytes, problem.accumulator_bytes) + 3) / 4;
    unsigned need = 24 + r.items_per_thread * per_value;
    unsigned budget = std::min(limits.max_registers_per_thread,
                               limits.registers_per_block / std::max(r.block_size, 1u));
    if (need <= budget)
      return std::nullopt;
    return fmt::format("about {} registers per thread; {} threads per block leave {}", need,
                       r.block_size, budget);
  });
  space.add_constraint("idle threads", [problem, typed](const TuningConfig& c) -> std::optional<std::string> {
    ReductionConfig r = typed(c);
    uint64_t threads = ceil_div(problem.length, r.items_per_thread);
    if (r.block_size <= 64 || threads > r.block_size / 2)
      return std::nullopt;
    return fmt::format("rows of {} need {} threads at {} per thread; a block of {} would be mostly "
                       "idle",
                       problem.length, threads, r.items_per_thread, r.block_size);
  });
  space.add_constraint("stages", [problem, limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    ReductionConfig r = typed(c);
    uint64_t per_pass = uint64_t(r.block_size) * r.items_per_thread;
    if (r.stages == 2 && problem.length <= per_pass)
      return fmt::format("one block covers a row of {} in one pass; a second stage would combine "
                         "one partial",
                         problem.length);
    if (r.stages == 1 && problem.rows < limits.sm_count && problem.length > 64 * per_pass)
      return fmt::format("{} row{} of {} with one block each would leave most of {} SMs idle",
                         problem.rows, problem.rows == 1 ? "" : "s", problem.length,
                         limits.sm_count);
    return std::nullopt;
  });

  space.set_default(heuristic_reduction_config(problem, limits).to_config());
  return space;
}

} // namespace gpukit::codegen
