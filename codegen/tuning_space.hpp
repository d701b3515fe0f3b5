// Tuning spaces: the launch and code-generation configurations an autotuner
// may try for one kernel family, declared beside the code generators that
// consume them, with the constraints that prune invalid or pointless points
// before anything is compiled.
//
//   TuningSpace space = elementwise_space(describe_elementwise(program, n, aligned), limits);
//   TuningSpace::Enumeration e = space.enumerate();   // e.candidates[0] is the heuristic default
//   EmitOptions o = ElementwiseConfig::from_config(e.candidates[k])->emit_options(index64);
//
// A configuration is a list of named integers (TuningConfig), so the tuner,
// the database (runtime/tuning_database.hpp) and the tables treat every
// family alike; each family has a typed view (ElementwiseConfig,
// ReductionConfig, TileConfig) for its code generator. Families:
//  * elementwise: threads per block, items per thread, vector width (scalar
//    or one 16-byte pack: the emitter's EmitOptions::vectorize), and the grid
//    (the heuristic's capped exact cover, exact cover, or a multiple of the
//    SM count with the kernel's grid-stride loop doing the rest);
//  * reductions: block size, items per thread, one or two stages (declared
//    ahead of the reduction emitter);
//  * tiles: the extension point matmul kernels use (tile shapes, pipeline
//    stages, warps); they add dimensions and constraints of their own.
// A dimension marked launch_only changes the launch, not the compiled code,
// so candidates that differ only there share one compile.
// What this file does not do: compile or time anything (dsl/tune.hpp does).
#pragma once

#include "codegen/cuda_emitter.hpp"
#include "codegen/ir.hpp"

#include <llvm/ADT/ArrayRef.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpukit::codegen {

/// What the target GPU allows, as plain numbers (codegen knows nothing of
/// the runtime: dsl/tune fills this from rt::DeviceInfo).
struct TargetLimits {
  unsigned sm_major = 9, sm_minor = 0;
  unsigned sm_count = 132;
  unsigned max_threads_per_sm = 2048;
  unsigned max_threads_per_block = 1024;
  unsigned registers_per_sm = 65536;
  unsigned registers_per_block = 65536;
  unsigned max_registers_per_thread = 255;
  unsigned shared_bytes_per_block = 48 * 1024;        ///< without the opt-in attribute
  unsigned shared_bytes_per_block_optin = 227 * 1024; ///< with it (sm_90)
  uint64_t l2_bytes = 50ull << 20;

  /// The limits of compute capability major.minor from the CUDA
  /// programming guide's table (sm_80 and later; others get sm_80's), with
  /// the H100's SM count and L2 until the caller sets the device's.
  static TargetLimits for_arch(unsigned major, unsigned minor);
};

/// One point of a space: named integers in the space's dimension order.
class TuningConfig {
public:
  TuningConfig() = default;
  TuningConfig(std::initializer_list<std::pair<std::string, int64_t>> values);

  /// Sets `name` (appended when new).
  TuningConfig& set(std::string_view name, int64_t value);
  std::optional<int64_t> get(std::string_view name) const;
  /// The value of `name`; Error{Internal} when it is missing.
  int64_t at(std::string_view name) const;
  llvm::ArrayRef<std::pair<std::string, int64_t>> values() const { return Values; }
  /// The values by name (the database's form).
  std::map<std::string, int64_t> to_map() const;

  /// "block=256 ipt=2 vec=4 grid=-4": the raw numbers (TuningSpace::describe
  /// formats them for people).
  std::string to_string() const;
  bool operator==(const TuningConfig&) const = default;

private:
  std::vector<std::pair<std::string, int64_t>> Values;
};

/// One axis of a space.
struct TuningDimension {
  std::string name;            ///< short, used in tables and the database: "block"
  std::string doc;             ///< what it means: "threads per block"
  std::vector<int64_t> values; ///< in the order tried
  /// Changes only the launch (grid), not the compiled kernel.
  bool launch_only = false;
  /// How a value reads in tables ("4xSM"); nullptr prints the number.
  std::function<std::string(int64_t)> format = nullptr;
};

/// A point a constraint rejected, and why (the numbers that broke it).
struct PrunedConfig {
  TuningConfig config;
  std::string constraint; ///< "registers", "shared memory", "alignment", ...
  std::string reason;
};

class TuningSpace {
public:
  /// A constraint returns why `config` is invalid or pointless, or nullopt.
  using Check = std::function<std::optional<std::string>(const TuningConfig&)>;

  /// `family` and `version` name the space in the tuning database: bump the
  /// version when a dimension's meaning or the code it generates changes,
  /// so stored answers from before are ignored.
  TuningSpace(std::string family, unsigned version);

  const std::string& family() const { return Family; }
  unsigned version() const { return Version; }
  /// "elementwise/1"
  std::string id() const;

  TuningSpace& add_dimension(TuningDimension dimension);
  TuningSpace& add_constraint(std::string name, Check check);
  /// The configuration used without tuning; it must give every dimension a
  /// value from its list (Error{Internal} otherwise; call it again after
  /// adding a dimension). It is always a candidate, even where a constraint
  /// would prune it: it is what runs without tuning and the baseline every
  /// candidate is checked and timed against.
  TuningSpace& set_default(TuningConfig config);

  llvm::ArrayRef<TuningDimension> dimensions() const { return Dimensions; }
  const TuningDimension* dimension(std::string_view name) const;
  const TuningConfig& default_config() const { return Default; }

  /// Points in the full product of the dimensions.
  uint64_t size() const;
  /// Whether every dimension has a value and each value is one of its
  /// dimension's (a stored configuration failing this is stale).
  bool contains(const TuningConfig& config) const;
  /// The first constraint `config` violates, or nullopt.
  std::optional<PrunedConfig> check(const TuningConfig& config) const;

  struct Enumeration {
    /// Valid points: the default first, then the rest in odometer order
    /// (the last dimension changing fastest).
    std::vector<TuningConfig> candidates;
    std::vector<PrunedConfig> pruned;
  };
  Enumeration enumerate() const;

  /// `config` without its launch-only dimensions: equal for candidates that
  /// share a compiled kernel.
  TuningConfig compile_part(const TuningConfig& config) const;
  /// `config` with its launch-only dimensions taken from `launch`.
  TuningConfig with_launch_of(const TuningConfig& config, const TuningConfig& launch) const;

  /// "block=256 ipt=2 vec=4 grid=4xSM", formatted by the dimensions.
  std::string describe(const TuningConfig& config) const;

private:
  std::string Family;
  unsigned Version;
  std::vector<TuningDimension> Dimensions;
  std::vector<std::pair<std::string, Check>> Constraints;
  TuningConfig Default;
};

/// The structural hash of `optimized` with its operands renamed (in0..,
/// out0.., s0..) and no label: what the tuning database keys a program's
/// answers by, so a computation finds its answer whatever its arrays are
/// called (the DSL's variable names, a text program's, a tuning run's).
uint64_t tuning_hash(const ir::Program& optimized);

// --- Elementwise kernels ---------------------------------------------------------

/// How many blocks an elementwise kernel is launched with.
enum class GridPolicy : uint8_t {
  /// Exact cover capped at `multiple` waves of resident blocks: the
  /// heuristic (4 waves of resident blocks).
  CappedWaves,
  /// One thread per pack and item: ceil(packs / (block * items)).
  ExactCover,
  /// `multiple` blocks per SM; the grid-stride loop covers the rest.
  SmMultiple,
};

/// The numbers the elementwise space and its constraints depend on.
struct ElementwiseProblem {
  uint64_t n = 0;
  /// Elements per 16-byte pack (codegen::pack_width); 1 means no vector form.
  unsigned pack_width = 1;
  /// Every operand 16-byte aligned and contiguous, so packs are legal.
  bool aligned = true;
  unsigned inputs = 0;      ///< arrays read
  unsigned outputs = 0;
  unsigned input_bytes = 0; ///< bytes read per element, all inputs
  unsigned output_bytes = 0;
  unsigned operations = 0;  ///< computing nodes per element (a register estimate)
  bool index64 = false;
};

/// `optimized`'s numbers for n elements.
ElementwiseProblem describe_elementwise(const ir::Program& optimized, uint64_t n, bool aligned);

/// The typed view of an elementwise configuration.
struct ElementwiseConfig {
  KernelShape shape;
  bool vectorize = true;
  GridPolicy grid = GridPolicy::CappedWaves;
  unsigned grid_multiple = 4; ///< waves (CappedWaves) or blocks per SM (SmMultiple)

  EmitOptions emit_options(bool index64) const;
  /// The "block", "ipt", "vec", "grid" values; vec is the problem's pack
  /// width when vectorized, else 1.
  TuningConfig to_config(const ElementwiseProblem& problem) const;
  /// nullopt when a dimension is missing or out of range.
  static std::optional<ElementwiseConfig> from_config(const TuningConfig& config);
  /// "block 256, 2 items/thread, vectorized, grid 4 x SMs"
  std::string describe() const;
  bool operator==(const ElementwiseConfig& o) const {
    return shape.block_size == o.shape.block_size &&
           shape.items_per_thread == o.shape.items_per_thread && vectorize == o.vectorize &&
           grid == o.grid && grid_multiple == o.grid_multiple;
  }
};

/// The elementwise space's family and version in the tuning database.
inline constexpr std::string_view kElementwiseFamily = "elementwise";
inline constexpr unsigned kElementwiseSpaceVersion = 1;

/// The heuristic: 256 threads, one item, vectorized when aligned, the
/// capped grid (what the DSL launched before tuning existed).
ElementwiseConfig heuristic_elementwise_config(const ElementwiseProblem& problem);

/// Blocks for `config` over `n` elements processed `pack_width` at a time
/// (1 when not vectorized); at least 1.
unsigned elementwise_grid(const ElementwiseConfig& config, uint64_t n, unsigned pack_width,
                          const TargetLimits& limits);

/// Registers per thread the emitted loop needs, estimated from what the
/// staged loop keeps live (items x pack elements of every input, the
/// computation's temporaries, addressing).
unsigned estimate_elementwise_registers(const ElementwiseProblem& problem,
                                        const ElementwiseConfig& config);

/// block 64..1024 x items 1..8 (powers of two) x vector {1, pack} x grid
/// {capped, exact, 1..32 x SMs}, pruned by registers (no spilling under
/// __launch_bounds__), alignment, and grids that repeat another point's
/// launch or cover more than n needs.
TuningSpace elementwise_space(const ElementwiseProblem& problem, const TargetLimits& limits);

// --- Reductions ----------------------------------------------------------------

/// Reducing `rows` independent rows of `length` elements each.
struct ReductionProblem {
  uint64_t rows = 1;
  uint64_t length = 0;
  unsigned element_bytes = 4;
  unsigned accumulator_bytes = 4;
};

struct ReductionConfig {
  unsigned block_size = 256;
  unsigned items_per_thread = 4;
  /// 1: one block per row; 2: blocks write partial results, a second
  /// kernel combines them.
  unsigned stages = 2;

  TuningConfig to_config() const;
  static std::optional<ReductionConfig> from_config(const TuningConfig& config);
  bool operator==(const ReductionConfig&) const = default;
};

inline constexpr std::string_view kReductionFamily = "reduction";
inline constexpr unsigned kReductionSpaceVersion = 1;

/// One stage when a row fits a block's single pass or there are rows
/// enough to fill the GPU, else two.
ReductionConfig heuristic_reduction_config(const ReductionProblem& problem, const TargetLimits& limits);

/// block 64..1024 x items 1..8 x stages {1, 2}, pruned by shared memory
/// (one partial per warp), registers, and second stages with one partial.
TuningSpace reduction_space(const ReductionProblem& problem, const TargetLimits& limits);

// --- Tiles: the extension point for matmul kernels ---------------------------

/// C[m, n] = A[m, k] * B[k, n] with elements of the given sizes.
struct TileProblem {
  uint64_t m = 0, n = 0, k = 0;
  unsigned a_bytes = 2, b_bytes = 2, accumulator_bytes = 4;
};

struct TileConfig {
  unsigned tile_m = 128, tile_n = 128, tile_k = 32;
  unsigned stages = 3; ///< shared-memory pipeline depth
  unsigned warps = 4;

  TuningConfig to_config() const;
  static std::optional<TileConfig> from_config(const TuningConfig& config);
  /// Shared memory the staged A and B tiles take.
  uint64_t shared_bytes(const TileProblem& problem) const;
  bool operator==(const TileConfig&) const = default;
};

/// The candidate values of a tile space; a matmul kernel narrows or widens them.
struct TileSpaceOptions {
  std::vector<int64_t> tile_m = {64, 128, 256};
  std::vector<int64_t> tile_n = {64, 128, 256};
  std::vector<int64_t> tile_k = {32, 64};
  std::vector<int64_t> stages = {2, 3, 4};
  std::vector<int64_t> warps = {4, 8};
  TileConfig default_config;
  std::string family = "tile";
  unsigned version = 1;
};

/// Tiles pruned by shared memory (stages x (A tile + B tile) within the
/// opt-in limit), registers (the accumulator tile spread over the warps'
/// threads), alignment (16-byte rows of A and B tiles for cp.async),
/// threads per block, and tiles far larger than the problem. A matmul
/// kernel adds its own dimensions (swizzle, split-k) and constraints to the
/// space this returns.
TuningSpace tile_space(const TileProblem& problem, const TargetLimits& limits,
                       const TileSpaceOptions& options = {});

} // namespace gpukit::codegen
