// The elementwise family of codegen/tuning_space.hpp: what emit_cuda's
// EmitOptions and the launcher's grid may be, and which points are not worth
// compiling.
#include "codegen/tuning_space.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::codegen {

namespace {

/// The "grid" dimension's encoding: -k capped at k waves, 0 exact cover,
/// k > 0 k blocks per SM.
int64_t encode_grid(GridPolicy policy, unsigned multiple) {
  switch (policy) {
  case GridPolicy::CappedWaves: return -static_cast<int64_t>(multiple);
  case GridPolicy::ExactCover: return 0;
  case GridPolicy::SmMultiple: return multiple;
  }
  return 0;
}

std::string format_grid(int64_t g) {
  if (g < 0)
    return fmt::format("cap{}w", -g);
  if (g == 0)
    return "exact";
  return fmt::format("{}xSM", g);
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/// Registers a thread may use without spilling under __launch_bounds__(block):
/// the register file shared by one block, in the 256-register per-warp
/// allocation unit, and at most the per-thread maximum.
unsigned register_budget(unsigned block, const TargetLimits& limits) {
  unsigned warps = std::max(1u, (block + 31) / 32);
  unsigned per_warp = limits.registers_per_block / warps / 256 * 256;
  return std::min(limits.max_registers_per_thread, per_warp / 32);
}

} // namespace

ElementwiseProblem describe_elementwise(const ir::Program& p, uint64_t n, bool aligned) {
  ElementwiseProblem e;
  e.n = n;
  e.aligned = aligned;
  e.pack_width = pack_width(p);
  e.index64 = needs_index64(n);
  std::vector<bool> read(p.inputs().size(), false);
  for (const ir::Node& node : p.nodes()) {
    // Leaves cost no work; every operation counts the same here.
    if (node.op == ir::Op::Input)
      read[node.index] = true;
    else if (node.op != ir::Op::Scalar && node.op != ir::Op::Const)
      ++e.operations;
  }
  for (size_t k = 0; k < p.inputs().size(); ++k) {
    if (!read[k])
      continue;
    ++e.inputs;
    e.input_bytes += size_of(p.inputs()[k].type);
  }
  for (const ir::Output& o : p.outputs()) {
    ++e.outputs;
    e.output_bytes += size_of(o.type);
  }
  return e;
}

EmitOptions ElementwiseConfig::emit_options(bool index64) const {
  EmitOptions o;
  o.shape = shape;
  o.vectorize = vectorize;
  o.index64 = index64;
  return o;
}

TuningConfig ElementwiseConfig::to_config(const ElementwiseProblem& problem) const {
  return {{"block", shape.block_size},
          {"ipt", shape.items_per_thread},
          {"vec", vectorize ? problem.pack_width : 1},
          {"grid", encode_grid(grid, grid_multiple)}};
}

std::optional<ElementwiseConfig> ElementwiseConfig::from_config(const TuningConfig& config) {
  std::optional<int64_t> block = config.get("block"), ipt = config.get("ipt"),
                         vec = config.get("vec"), grid = config.get("grid");
  if (!block || !ipt || !vec || !grid || *block < 1 || *block > 1024 || *ipt < 1 || *ipt > 64 ||
      *vec < 1 || *vec > 16 || *grid < -1024 || *grid > 1024)
    return std::nullopt;
  ElementwiseConfig c;
  c.shape.block_size = static_cast<unsigned>(*block);
  c.shape.items_per_thread = static_cast<unsigned>(*ipt);
  c.vectorize = *vec > 1;
  if (*grid < 0) {
    c.grid = GridPolicy::CappedWaves;
    c.grid_multiple = static_cast<unsigned>(-*grid);
  } else if (*grid == 0) {
    c.grid = GridPolicy::ExactCover;
    c.grid_multiple = 0;
  } else {
    c.grid = GridPolicy::SmMultiple;
    c.grid_multiple = static_cast<unsigned>(*grid);
  }
  return c;
}

std::string ElementwiseConfig::describe() const {
  std::string grid_text;
  switch (grid) {
  case GridPolicy::CappedWaves:
    grid_text = fmt::format("exact cover capped at {} waves", grid_multiple);
    break;
  case GridPolicy::ExactCover: grid_text = "exact cover"; break;
  case GridPolicy::SmMultiple: grid_text = fmt::format("{} x SMs", grid_multiple); break;
  }
  return fmt::format("block {}, {} item{}/thread, {}, grid {}", shape.block_size,
                     shape.items_per_thread, shape.items_per_thread == 1 ? "" : "s",
                     vectorize ? "vectorized" : "scalar", grid_text);
}

ElementwiseConfig heuristic_elementwise_config(const ElementwiseProblem& problem) {
  ElementwiseConfig c;
  c.shape = {256, 1};
  c.vectorize = problem.aligned && problem.pack_width > 1;
  c.grid = GridPolicy::CappedWaves;
  c.grid_multiple = 4;
  return c;
}

unsigned elementwise_grid(const ElementwiseConfig& config, uint64_t n, unsigned pack_width,
                          const TargetLimits& limits) {
  uint64_t width = std::max(pack_width, 1u);
  uint64_t block = std::max(config.shape.block_size, 1u);
  uint64_t items = std::max(config.shape.items_per_thread, 1u);
  uint64_t exact = ceil_div(ceil_div(n, width), block * items);
  uint64_t sms = std::max(limits.sm_count, 1u);
  uint64_t grid = exact;
  switch (config.grid) {
  case GridPolicy::CappedWaves: {
    // A grid-stride loop needs no more than a few waves of resident blocks.
    uint64_t resident = sms * std::max<uint64_t>(limits.max_threads_per_sm / block, 1);
    grid = std::min(exact, resident * std::max(config.grid_multiple, 1u));
    break;
  }
  case GridPolicy::ExactCover: break;
  case GridPolicy::SmMultiple: grid = sms * std::max(config.grid_multiple, 1u); break;
  }
  // Grid x is at most 2^31 - 1 blocks; the grid-stride loop covers the rest.
  return static_cast<unsigned>(std::clamp<uint64_t>(grid, 1, 0x7fffffff));
}

unsigned estimate_elementwise_registers(const ElementwiseProblem& p, const ElementwiseConfig& c) {
  // The staged loop loads every item of every input before computing, so
  // items x (one register per 4 bytes of each input's pack or element) stay
  // live, plus one pack of each output, an index per item, the
  // computation's temporaries and addressing.
  unsigned width = c.vectorize ? std::max(p.pack_width, 1u) : 1;
  // input_bytes sums the element sizes: a pack of each is width x size bytes.
  unsigned loaded_per_item = (width * p.input_bytes + 3) / 4;
  unsigned stored = c.vectorize ? 4 * p.outputs : (p.output_bytes + 3) / 4;
  unsigned index = p.index64 ? 2 : 1;
  unsigned temporaries = std::min(p.operations, 24u);
  return 16 + c.shape.items_per_thread * (loaded_per_item + index) + stored + temporaries;
}

TuningSpace elementwise_space(const ElementwiseProblem& problem, const TargetLimits& limits) {
  TuningSpace space(std::string(kElementwiseFamily), kElementwiseSpaceVersion);
  space.add_dimension({"block", "threads per block", {64, 128, 256, 512, 1024}});
  space.add_dimension({"ipt", "items (packs or elements) per thread per iteration", {1, 2, 4, 8}});
  std::vector<int64_t> vec = {1};
  if (problem.pack_width > 1)
    vec.push_back(problem.pack_width);
  space.add_dimension({"vec", "elements per load and store (one 16-byte pack, or 1)", vec});
  space.add_dimension({"grid",
                       "blocks: capped exact cover (cap<k>w), exact cover, or k blocks per SM",
                       {-4, 0, 1, 2, 4, 8, 16, 32},
                       /*launch_only=*/true,
                       format_grid});

  auto typed = [](const TuningConfig& c) { return *ElementwiseConfig::from_config(c); };
  auto width_of = [problem](const ElementwiseConfig& c) {
    return c.vectorize ? problem.pack_width : 1u;
  };

  space.add_constraint("threads", [limits](const TuningConfig& c) -> std::optional<std::string> {
    int64_t block = c.at("block");
    if (block <= limits.max_threads_per_block)
      return std::nullopt;
    return fmt::format("{} threads per block exceed the device's {}", block,
                       limits.max_threads_per_block);
  });
  space.add_constraint("alignment", [problem](const TuningConfig& c) -> std::optional<std::string> {
    if (c.at("vec") == 1 || problem.aligned)
      return std::nullopt;
    return std::string("16-byte packs need every operand contiguous and 16-byte aligned, and "
                       "one is not");
  });
  space.add_constraint("registers",
                       [problem, limits, typed](const TuningConfig& c) -> std::optional<std::string> {
    ElementwiseConfig e = typed(c);
    unsigned need = estimate_elementwise_registers(problem, e);
    unsigned budget = register_budget(e.shape.block_size, limits);
    if (need <= budget)
      return std::nullopt;
    return fmt::format("about {} registers per thread; {} threads per block leave {} without "
                       "spilling",
                       need, e.shape.block_size, budget);
  });
  space.add_constraint("idle threads",
                       [problem, typed, width_of](const TuningConfig& c) -> std::optional<std::string> {
    // A block more than half idle gains nothing over a smaller block.
    ElementwiseConfig e = typed(c);
    uint64_t threads = ceil_div(ceil_div(problem.n, width_of(e)), e.shape.items_per_thread);
    if (e.shape.block_size <= 64 || threads > e.shape.block_size / 2)
      return std::nullopt;
    return fmt::format("{} elements need {} threads at {} per thread; a block of {} would be "
                       "mostly idle",
                       problem.n, threads, e.shape.items_per_thread * width_of(e),
                       e.shape.block_size);
  });
  space.add_constraint("same launch",
                       [problem, limits, typed, width_of](const TuningConfig& c) -> std::optional<std::string> {
    ElementwiseConfig e = typed(c);
    if (e.grid == GridPolicy::CappedWaves)
      return std::nullopt;
    unsigned width = width_of(e);
    ElementwiseConfig exact = e, capped = e;
    exact.grid = GridPolicy::ExactCover;
    capped.grid = GridPolicy::CappedWaves;
    capped.grid_multiple = 4;
    unsigned exact_grid = elementwise_grid(exact, problem.n, width, limits);
    unsigned capped_grid = elementwise_grid(capped, problem.n, width, limits);
    unsigned grid = elementwise_grid(e, problem.n, width, limits);
    if (e.grid == GridPolicy::ExactCover && grid == capped_grid)
      return fmt::format("exact cover is {} blocks, what the capped grid gives too", grid);
    if (e.grid == GridPolicy::SmMultiple && grid >= exact_grid)
      return fmt::format("{} x {} SMs = {} blocks, more than exact cover needs ({})",
                         e.grid_multiple, limits.sm_count, grid, exact_grid);
    if (e.grid == GridPolicy::SmMultiple && grid == capped_grid)
      return fmt::format("{} blocks, what the capped grid gives too", grid);
    return std::nullopt;
  });

  space.set_default(heuristic_elementwise_config(problem).to_config(problem));
  return space;
}

} // namespace gpukit::codegen
