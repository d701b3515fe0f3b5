// The tile family of codegen/tuning_space.hpp: the extension point matmul
// kernels build their spaces on (tile shapes, pipeline stages, warps).
#include "codegen/tuning_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace gpukit::codegen {

TuningConfig TileConfig::to_config() const {
  return {{"tile_m", tile_m}, {"tile_n", tile_n}, {"tile_k", tile_k}, {"stages", stages},
          {"warps", warps}};
}

std::optional<TileConfig> TileConfig::from_config(const TuningConfig& config) {
  std::optional<int64_t> m = config.get("tile_m"), n = config.get("tile_n"), k = config.get("tile_k"),
                         stages = config.get("stages"), warps = config.get("warps");
  if (!m || !n || !k || !stages || !warps || *m < 1 || *n < 1 || *k < 1 || *stages < 1 ||
      *warps < 1 || *m > 1024 || *n > 1024 || *k > 1024 || *stages > 16 || *warps > 32)
    return std::nullopt;
  return TileConfig{static_cast<unsigned>(*m), static_cast<unsigned>(*n), static_cast<unsigned>(*k),
                    static_cast<unsigned>(*stages), static_cast<unsigned>(*warps)};
}

uint64_t TileConfig::shared_bytes(const TileProblem& p) const {
  return uint64_t(stages) *
         (uint64_t(tile_m) * tile_k * p.a_bytes + uint64_t(tile_k) * tile_n * p.b_bytes);
}

TuningSpace tile_space(const TileProblem& problem, const TargetLimits& limits,
                       const TileSpaceOptions& options) {
  TuningSpace space(options.family, options.version);
  space.add_dimension({"tile_m", "rows of C per block", options.tile_m});
  space.add_dimension({"tile_n", "columns of C per block", options.tile_n});
  space.add_dimension({"tile_k", "depth of each staged A and B tile", options.tile_k});
  space.add_dimension({"stages", "shared-memory pipeline stages", options.stages});
  space.add_dimension({"warps", "warps per block", options.warps});
  auto typed = [](const TuningConfig& c) { return *TileConfig::from_config(c); };

  space.add_constraint("threads", [limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    TileConfig t = typed(c);
    if (t.warps * 32 <= limits.max_threads_per_block)
      return std::nullopt;
    return fmt::format("{} warps are {} threads, over the device's {} per block", t.warps,
                       t.warps * 32, limits.max_threads_per_block);
  });
  space.add_constraint("shared memory", [problem, limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    TileConfig t = typed(c);
    uint64_t bytes = t.shared_bytes(problem);
    if (bytes <= limits.shared_bytes_per_block_optin)
      return std::nullopt;
    return fmt::format("{} stages of {}x{} A and {}x{} B tiles take {} bytes, over the {} a block "
                       "may have (sm_{}{})",
                       t.stages, t.tile_m, t.tile_k, t.tile_k, t.tile_n, bytes,
                       limits.shared_bytes_per_block_optin, limits.sm_major, limits.sm_minor);
  });
  space.add_constraint("registers", [problem, limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    // The accumulator tile spread over the block's threads, plus fragments
    // of A and B and addressing.
    TileConfig t = typed(c);
    unsigned threads = t.warps * 32;
    uint64_t accumulators = uint64_t(t.tile_m) * t.tile_n * problem.accumulator_bytes / 4 / threads;
    uint64_t need = accumulators + 40;
    uint64_t budget = std::min<uint64_t>(limits.max_registers_per_thread,
                                         limits.registers_per_block / threads);
    if (need <= budget)
      return std::nullopt;
    return fmt::format("a {}x{} accumulator over {} threads needs about {} registers per thread, "
                       "over {}",
                       t.tile_m, t.tile_n, threads, need, budget);
  });
  space.add_constraint("alignment", [problem, typed](const TuningConfig& c) -> std::optional<std::string> {
    // cp.async copies 16 bytes: a tile row of A (tile_k elements) and of B
    // (tile_n elements) must be whole 16-byte chunks.
    TileConfig t = typed(c);
    if ((t.tile_k * problem.a_bytes) % 16 == 0 && (t.tile_n * problem.b_bytes) % 16 == 0)
      return std::nullopt;
    return fmt::format("tile rows of {} and {} bytes are not multiples of 16 (cp.async)",
                       t.tile_k * problem.a_bytes, t.tile_n * problem.b_bytes);
  });
  space.add_constraint("oversized", [problem, typed](const TuningConfig& c) -> std::optional<std::string> {
    TileConfig t = typed(c);
    auto too_big = [](uint64_t tile, uint64_t extent) {
      return extent > 0 && tile >= 2 * std::bit_ceil(extent);
    };
    if (too_big(t.tile_m, problem.m) || too_big(t.tile_n, problem.n))
      return fmt::format("a {}x{} tile is over twice the {}x{} output", t.tile_m, t.tile_n,
                         problem.m, problem.n);
    return std::nullopt;
  });

  TuningConfig def = options.default_config.to_config();
  // A default outside the options' values (a narrowed space) becomes the first point.
  if (!space.contains(def))
    def = {{"tile_m", options.tile_m.front()}, {"tile_n", options.tile_n.front()},
           {"tile_k", options.tile_k.front()}, {"stages", options.stages.front()},
           {"warps", options.warps.front()}};
  space.set_default(def);
  return space;
}

} // namespace gpukit::codegen
