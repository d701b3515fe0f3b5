// Tuning spaces: enumeration order, constraint pruning (each pruned point
// names the constraint and the numbers), the typed views, and that every
// elementwise candidate is a kernel the emitter accepts.
#include "codegen/tuning_space.hpp"

#include "codegen/passes/pipeline.hpp"
#include "sample_programs.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

namespace gpukit::codegen {
namespace {

TuningSpace toy_space() {
  TuningSpace s("toy", 3);
  s.add_dimension({"a", "first", {1, 2, 3}});
  s.add_dimension({"b", "second", {10, 20}, /*launch_only=*/true,
                   [](int64_t v) { return fmt::format("b{}", v); }});
  s.add_constraint("no 3 with 20", [](const TuningConfig& c) -> std::optional<std::string> {
    if (c.at("a") == 3 && c.at("b") == 20)
      return std::string("3 and 20 do not mix");
    return std::nullopt;
  });
  s.set_default({{"b", 20}, {"a", 2}}); // any order; stored in dimension order
  return s;
}

const PrunedConfig* find_pruned(const TuningSpace::Enumeration& e, const TuningConfig& c) {
  for (const PrunedConfig& p : e.pruned)
    if (p.config == c)
      return &p;
  return nullptr;
}

bool is_candidate(const TuningSpace::Enumeration& e, const TuningConfig& c) {
  for (const TuningConfig& k : e.candidates)
    if (k == c)
      return true;
  return false;
}

TEST(TuningConfig, NamedValuesInOrder) {
  TuningConfig c{{"block", 256}, {"ipt", 2}};
  c.set("vec", 4).set("block", 512);
  EXPECT_EQ(c.to_string(), "block=512 ipt=2 vec=4");
  EXPECT_EQ(c.get("ipt"), 2);
  EXPECT_EQ(c.get("grid"), std::nullopt);
  EXPECT_EQ(c.at("vec"), 4);
  EXPECT_THROW(c.at("grid"), Error);
  auto m = c.to_map();
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.at("block"), 512);
}

TEST(TuningSpace, EnumeratesDefaultFirstThenOdometerOrder) {
  TuningSpace s = toy_space();
  EXPECT_EQ(s.id(), "toy/3");
  EXPECT_EQ(s.size(), 6u);
  EXPECT_EQ(s.default_config().to_string(), "a=2 b=20");
  TuningSpace::Enumeration e = s.enumerate();
  std::vector<std::string> order;
  for (const TuningConfig& c : e.candidates)
    order.push_back(c.to_string());
  EXPECT_EQ(order, (std::vector<std::string>{"a=2 b=20", "a=1 b=10", "a=1 b=20", "a=2 b=10",
                                             "a=3 b=10"}));
  ASSERT_EQ(e.pruned.size(), 1u);
  EXPECT_EQ(e.pruned[0].config.to_string(), "a=3 b=20");
  EXPECT_EQ(e.pruned[0].constraint, "no 3 with 20");
  EXPECT_EQ(e.pruned[0].reason, "3 and 20 do not mix");
  EXPECT_EQ(e.candidates.size() + e.pruned.size(), s.size());
}

TEST(TuningSpace, LaunchOnlyDimensionsShareACompile) {
  TuningSpace s = toy_space();
  TuningConfig c{{"a", 1}, {"b", 20}};
  EXPECT_EQ(s.compile_part(c).to_string(), "a=1");
  EXPECT_EQ(s.with_launch_of(c, TuningConfig{{"a", 3}, {"b", 10}}).to_string(), "a=1 b=10");
  EXPECT_EQ(s.describe(c), "a=1 b=b20");
}

TEST(TuningSpace, ContainsChecksEveryDimension) {
  TuningSpace s = toy_space();
  EXPECT_TRUE(s.contains({{"a", 1}, {"b", 10}}));
  EXPECT_FALSE(s.contains({{"a", 4}, {"b", 10}})) << "value outside the dimension";
  EXPECT_FALSE(s.contains({{"a", 1}})) << "missing dimension";
  EXPECT_FALSE(s.contains({{"a", 1}, {"b", 10}, {"c", 0}})) << "unknown dimension";
}

TEST(TuningSpace, MisdeclaredSpacesAreInternalErrors) {
  TuningSpace s("bad", 1);
  s.add_dimension({"a", "", {1, 2}});
  EXPECT_THROW(s.add_dimension({"a", "", {3}}), Error);
  EXPECT_THROW(s.add_dimension({"empty", "", {}}), Error);
  EXPECT_THROW(s.set_default({{"a", 5}}), Error);
  EXPECT_THROW(s.enumerate(), Error) << "no default";
  s.set_default({{"a", 1}});
  s.add_dimension({"later", "", {7}});
  EXPECT_THROW(s.enumerate(), Error) << "default set before the last dimension";
  s.set_default({{"a", 1}, {"later", 7}});
  EXPECT_EQ(s.enumerate().candidates.size(), 2u);
}

TEST(TuningHash, IgnoresNamesAndLabelsNotTheComputation) {
  ir::Program a = ir::optimize(test::saxpy_sin());
  ir::Program renamed;
  auto x = renamed.add_input("alpha", DType::Float32);
  auto y = renamed.add_input("beta", DType::Float32);
  auto s = renamed.add_scalar("s0", DType::Float32, true);
  renamed.add_output("result", DType::Float32,
                     renamed.add(ir::Op::Add, {renamed.add(ir::Op::Mul, {s, x}),
                                               renamed.add(ir::Op::Sin, {y})}));
  EXPECT_EQ(tuning_hash(a), tuning_hash(ir::optimize(renamed)));
  EXPECT_EQ(tuning_hash(a), tuning_hash(ir::optimize(a))) << "optimize is idempotent for it";
  EXPECT_NE(tuning_hash(a), tuning_hash(ir::optimize(test::saxpy_sin(DType::Float64))));
  EXPECT_NE(tuning_hash(a), tuning_hash(ir::optimize(test::where_compare())));
  ir::Program cos_instead;
  auto cx = cos_instead.add_input("x", DType::Float32);
  auto cy = cos_instead.add_input("y", DType::Float32);
  auto cs = cos_instead.add_scalar("s0", DType::Float32, true);
  cos_instead.add_output("out", DType::Float32,
                         cos_instead.add(ir::Op::Add, {cos_instead.add(ir::Op::Mul, {cs, cx}),
                                                       cos_instead.add(ir::Op::Cos, {cy})}));
  EXPECT_NE(tuning_hash(a), tuning_hash(ir::optimize(cos_instead)));
}

// --- Elementwise -------------------------------------------------------------------

ElementwiseProblem saxpy_problem(uint64_t n, bool aligned = true) {
  return describe_elementwise(ir::optimize(test::saxpy_sin()), n, aligned);
}

TEST(ElementwiseSpace, DescribesTheProgram) {
  ElementwiseProblem p = saxpy_problem(1 << 24);
  EXPECT_EQ(p.pack_width, 4u);
  EXPECT_EQ(p.inputs, 2u);
  EXPECT_EQ(p.outputs, 1u);
  EXPECT_EQ(p.input_bytes, 8u);
  EXPECT_EQ(p.output_bytes, 4u);
  EXPECT_GE(p.operations, 3u);
  EXPECT_FALSE(p.index64);
  EXPECT_TRUE(describe_elementwise(ir::optimize(test::saxpy_sin()), uint64_t(1) << 31, true).index64);
  EXPECT_EQ(describe_elementwise(ir::optimize(test::int64_divmod()), 100, true).pack_width, 2u);
}

TEST(ElementwiseSpace, DefaultIsTheHeuristicAndComesFirst) {
  ElementwiseProblem p = saxpy_problem(1 << 24);
  TuningSpace s = elementwise_space(p, TargetLimits::for_arch(9, 0));
  EXPECT_EQ(s.id(), "elementwise/1");
  EXPECT_EQ(s.size(), 5u * 4 * 2 * 8);
  ElementwiseConfig h = heuristic_elementwise_config(p);
  EXPECT_EQ(h.shape.block_size, 256u);
  EXPECT_EQ(h.shape.items_per_thread, 1u);
  EXPECT_TRUE(h.vectorize);
  EXPECT_EQ(h.grid, GridPolicy::CappedWaves);
  EXPECT_EQ(h.grid_multiple, 4u);
  EXPECT_EQ(s.default_config(), h.to_config(p));
  EXPECT_EQ(s.describe(s.default_config()), "block=256 ipt=1 vec=4 grid=cap4w");
  TuningSpace::Enumeration e = s.enumerate();
  ASSERT_FALSE(e.candidates.empty());
  EXPECT_EQ(e.candidates[0], s.default_config());
  EXPECT_EQ(e.candidates.size() + e.pruned.size(), s.size());
  // Every candidate passes every constraint; every pruned point says why.
  for (const TuningConfig& c : e.candidates)
    EXPECT_EQ(s.check(c), std::nullopt) << s.describe(c);
  for (const PrunedConfig& pc : e.pruned) {
    EXPECT_FALSE(pc.constraint.empty());
    EXPECT_FALSE(pc.reason.empty());
  }
}

TEST(ElementwiseSpace, RegistersPruneLargeStagedBlocks) {
  ElementwiseProblem p = saxpy_problem(1 << 24);
  TuningSpace s = elementwise_space(p, TargetLimits::for_arch(9, 0));
  TuningSpace::Enumeration e = s.enumerate();
  // 1024 threads leave 64 registers; 8 staged packs of two float4 inputs need more.
  const PrunedConfig* big = find_pruned(e, {{"block", 1024}, {"ipt", 8}, {"vec", 4}, {"grid", -4}});
  ASSERT_TRUE(big);
  EXPECT_EQ(big->constraint, "registers");
  EXPECT_NE(big->reason.find("1024 threads per block leave 64"), std::string::npos) << big->reason;
  // The same staging in a block of 256 fits.
  EXPECT_TRUE(is_candidate(e, {{"block", 256}, {"ipt", 8}, {"vec", 4}, {"grid", -4}}));
  EXPECT_LE(estimate_elementwise_registers(p, heuristic_elementwise_config(p)), 64u);
}

TEST(ElementwiseSpace, UnalignedOperandsPruneEveryPack) {
  ElementwiseProblem p = saxpy_problem(1 << 24, /*aligned=*/false);
  TuningSpace s = elementwise_space(p, TargetLimits::for_arch(9, 0));
  EXPECT_FALSE(ElementwiseConfig::from_config(s.default_config())->vectorize);
  TuningSpace::Enumeration e = s.enumerate();
  for (const TuningConfig& c : e.candidates)
    EXPECT_EQ(c.at("vec"), 1) << s.describe(c);
  const PrunedConfig* packed = find_pruned(e, {{"block", 256}, {"ipt", 1}, {"vec", 4}, {"grid", -4}});
  ASSERT_TRUE(packed);
  EXPECT_EQ(packed->constraint, "alignment");
}

TEST(ElementwiseSpace, RepeatedOrWastefulGridsArePruned) {
  TargetLimits h100 = TargetLimits::for_arch(9, 0);
  // 2^16 floats in packs of 4 with 256 threads: 64 blocks, well under the cap.
  ElementwiseProblem small = saxpy_problem(1 << 16);
  TuningSpace::Enumeration e = elementwise_space(small, h100).enumerate();
  const PrunedConfig* exact = find_pruned(e, {{"block", 256}, {"ipt", 1}, {"vec", 4}, {"grid", 0}});
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->constraint, "same launch");
  EXPECT_NE(exact->reason.find("64 blocks"), std::string::npos) << exact->reason;
  const PrunedConfig* many = find_pruned(e, {{"block", 256}, {"ipt", 1}, {"vec", 4}, {"grid", 1}});
  ASSERT_TRUE(many);
  EXPECT_NE(many->reason.find("more than exact cover needs (64)"), std::string::npos) << many->reason;

  // 2^28 floats: exact cover (262144 blocks) is far over the cap (4 x 132 x 8), so both differ.
  TuningSpace::Enumeration big = elementwise_space(saxpy_problem(1 << 28), h100).enumerate();
  EXPECT_TRUE(is_candidate(big, {{"block", 256}, {"ipt", 1}, {"vec", 4}, {"grid", 0}}));
  EXPECT_TRUE(is_candidate(big, {{"block", 256}, {"ipt", 1}, {"vec", 4}, {"grid", 8}}));
}

TEST(ElementwiseSpace, TinyProblemsKeepSmallBlocksOnly) {
  ElementwiseProblem tiny = saxpy_problem(1000);
  TuningSpace s = elementwise_space(tiny, TargetLimits::for_arch(9, 0));
  TuningSpace::Enumeration e = s.enumerate();
  // 1000 floats are 250 packs: packed blocks of 512 and 1024 would be mostly idle.
  for (const TuningConfig& c : e.candidates) {
    if (c.at("vec") == 4) {
      EXPECT_LE(c.at("block"), 256) << s.describe(c);
    }
  }
  const PrunedConfig* idle = find_pruned(e, {{"block", 1024}, {"ipt", 1}, {"vec", 4}, {"grid", -4}});
  ASSERT_TRUE(idle);
  EXPECT_EQ(idle->constraint, "idle threads");
  EXPECT_LT(e.candidates.size(), 40u) << "a tiny problem has a small space";
  // n = 0: the default and the smallest blocks.
  TuningSpace empty = elementwise_space(saxpy_problem(0), TargetLimits());
  for (const TuningConfig& c : empty.enumerate().candidates)
    EXPECT_TRUE(c == empty.default_config() || c.at("block") == 64) << empty.describe(c);
}

TEST(ElementwiseSpace, GridPolicies) {
  TargetLimits l = TargetLimits::for_arch(9, 0);
  ElementwiseConfig c;
  c.shape = {256, 2};
  c.grid = GridPolicy::ExactCover;
  EXPECT_EQ(elementwise_grid(c, 1 << 20, 4, l), (1u << 20) / 4 / 512);
  EXPECT_EQ(elementwise_grid(c, (1 << 20) + 1, 4, l), (1u << 20) / 4 / 512 + 1);
  EXPECT_EQ(elementwise_grid(c, 0, 4, l), 1u);
  c.grid = GridPolicy::SmMultiple;
  c.grid_multiple = 8;
  EXPECT_EQ(elementwise_grid(c, 1 << 20, 4, l), 8u * 132);
  c.grid = GridPolicy::CappedWaves;
  c.grid_multiple = 4;
  EXPECT_EQ(elementwise_grid(c, 1 << 20, 4, l), 512u) << "under the cap: exact";
  EXPECT_EQ(elementwise_grid(c, 1u << 30, 4, l), 4u * 132 * (2048 / 256)) << "capped";
}

TEST(ElementwiseSpace, TypedViewRoundTrips) {
  ElementwiseProblem p = saxpy_problem(1 << 20);
  ElementwiseConfig c;
  c.shape = {512, 4};
  c.vectorize = true;
  c.grid = GridPolicy::SmMultiple;
  c.grid_multiple = 16;
  TuningConfig t = c.to_config(p);
  EXPECT_EQ(t.to_string(), "block=512 ipt=4 vec=4 grid=16");
  EXPECT_EQ(ElementwiseConfig::from_config(t), c);
  EXPECT_EQ(c.describe(), "block 512, 4 items/thread, vectorized, grid 16 x SMs");
  EmitOptions o = c.emit_options(true);
  EXPECT_EQ(o.shape.block_size, 512u);
  EXPECT_EQ(o.shape.items_per_thread, 4u);
  EXPECT_TRUE(o.vectorize);
  EXPECT_TRUE(o.index64);
  EXPECT_EQ(ElementwiseConfig::from_config({{"block", 256}, {"ipt", 1}}), std::nullopt);
  EXPECT_EQ(ElementwiseConfig::from_config({{"block", 0}, {"ipt", 1}, {"vec", 1}, {"grid", 0}}),
            std::nullopt);
}

TEST(ElementwiseSpace, EveryCandidateEmits) {
  ir::Program program = ir::optimize(test::mixed_f16_f32());
  ElementwiseProblem p = describe_elementwise(program, (1 << 22) + 3, true);
  TuningSpace s = elementwise_space(p, TargetLimits::for_arch(9, 0));
  std::set<std::string> names;
  for (const TuningConfig& c : s.enumerate().candidates) {
    ElementwiseConfig e = *ElementwiseConfig::from_config(c);
    CudaKernel k = emit_cuda(program, e.emit_options(false));
    EXPECT_EQ(k.pack_width, e.vectorize ? p.pack_width : 1u) << s.describe(c);
    EXPECT_NE(k.source.find(fmt::format("__launch_bounds__({})", e.shape.block_size)),
              std::string::npos);
    names.insert(k.name);
  }
  // Launch-only points share a kernel: distinct names are the compile parts.
  std::set<std::string> parts;
  for (const TuningConfig& c : s.enumerate().candidates)
    parts.insert(s.compile_part(c).to_string());
  EXPECT_EQ(names.size(), parts.size());
}

// --- Reductions ----------------------------------------------------------------------

TEST(ReductionSpace, StagesArePrunedWhereTheyCannotHelp) {
  TargetLimits l = TargetLimits::for_arch(9, 0);
  ReductionProblem one_long_row{1, uint64_t(1) << 26, 4, 4};
  TuningSpace s = reduction_space(one_long_row, l);
  EXPECT_EQ(s.id(), "reduction/1");
  EXPECT_EQ(ReductionConfig::from_config(s.default_config())->stages, 2u);
  TuningSpace::Enumeration e = s.enumerate();
  for (const TuningConfig& c : e.candidates)
    EXPECT_EQ(c.at("stages"), 2) << "one block for 2^26 elements leaves the GPU idle";
  const PrunedConfig* single = find_pruned(e, {{"block", 256}, {"ipt", 4}, {"stages", 1}});
  ASSERT_TRUE(single);
  EXPECT_EQ(single->constraint, "stages");

  ReductionProblem many_short_rows{100000, 200, 4, 4};
  TuningSpace::Enumeration short_rows = reduction_space(many_short_rows, l).enumerate();
  for (const TuningConfig& c : short_rows.candidates) {
    if (c.at("block") * c.at("ipt") >= 200) {
      EXPECT_EQ(c.at("stages"), 1) << "a block covers a row of 200 in one pass";
    }
  }
  EXPECT_EQ(heuristic_reduction_config(many_short_rows, l).stages, 1u);
}

TEST(ReductionSpace, RegistersAndTypedView) {
  TargetLimits l = TargetLimits::for_arch(9, 0);
  ReductionConfig c{512, 8, 2};
  EXPECT_EQ(ReductionConfig::from_config(c.to_config()), c);
  EXPECT_EQ(ReductionConfig::from_config({{"block", 256}, {"ipt", 4}, {"stages", 3}}), std::nullopt);
  // f64 accumulators, 8 items: 24 + 16 registers fit even 1024 threads (64).
  TuningSpace s = reduction_space({1, uint64_t(1) << 24, 8, 8}, l);
  EXPECT_EQ(s.check({{"block", 1024}, {"ipt", 8}, {"stages", 2}}), std::nullopt);
}

// --- Tiles (the matmul extension point) -----------------------------------------------

TEST(TileSpace, SharedMemoryRegistersAndAlignmentPrune) {
  TargetLimits h100 = TargetLimits::for_arch(9, 0);
  TileProblem bf16{4096, 4096, 4096, 2, 2, 4};
  TuningSpace s = tile_space(bf16, h100);
  EXPECT_EQ(s.id(), "tile/1");
  EXPECT_EQ(s.default_config(), TileConfig{}.to_config());
  // 4 stages of 256x64 + 64x256 bf16 tiles = 256 KiB > 227 KiB.
  std::optional<PrunedConfig> smem =
      s.check({{"tile_m", 256}, {"tile_n", 256}, {"tile_k", 64}, {"stages", 4}, {"warps", 8}});
  ASSERT_TRUE(smem);
  EXPECT_EQ(smem->constraint, "shared memory");
  EXPECT_NE(smem->reason.find("262144 bytes"), std::string::npos) << smem->reason;
  // A 256x256 f32 accumulator over 128 threads is 512 registers each.
  std::optional<PrunedConfig> regs =
      s.check({{"tile_m", 256}, {"tile_n", 256}, {"tile_k", 32}, {"stages", 2}, {"warps", 4}});
  ASSERT_TRUE(regs);
  EXPECT_EQ(regs->constraint, "registers");
  // The A100 has less shared memory: what fits an H100 may not fit it.
  TileConfig deep{128, 256, 64, 4, 8};
  EXPECT_EQ(tile_space(bf16, h100).check(deep.to_config()), std::nullopt);
  ASSERT_TRUE(tile_space(bf16, TargetLimits::for_arch(8, 0)).check(deep.to_config()));

  TileSpaceOptions narrow;
  narrow.tile_k = {4};
  narrow.tile_n = {64};
  std::optional<PrunedConfig> align = tile_space(bf16, h100, narrow).check(
      {{"tile_m", 128}, {"tile_n", 64}, {"tile_k", 4}, {"stages", 2}, {"warps", 4}});
  ASSERT_TRUE(align);
  EXPECT_EQ(align->constraint, "alignment");
}

TEST(TileSpace, MatmulKernelsExtendIt) {
  TileSpaceOptions o;
  o.family = "matmul_bf16";
  o.tile_m = {128};
  o.tile_n = {128};
  o.tile_k = {32, 64};
  o.stages = {3};
  o.warps = {4};
  TuningSpace s = tile_space({2048, 2048, 2048, 2, 2, 4}, TargetLimits::for_arch(9, 0), o);
  s.add_dimension({"swizzle", "block rasterisation group", {1, 8}, /*launch_only=*/true});
  s.add_constraint("swizzle needs rows", [](const TuningConfig& c) -> std::optional<std::string> {
    return std::nullopt;
  });
  TuningConfig def = s.default_config();
  def.set("swizzle", 1);
  s.set_default(def);
  TuningSpace::Enumeration e = s.enumerate();
  EXPECT_EQ(e.candidates.size(), 4u);
  EXPECT_EQ(s.compile_part(e.candidates[0]).get("swizzle"), std::nullopt);
  // Tiles far larger than the output are pruned.
  TuningSpace tiny = tile_space({32, 32, 4096, 2, 2, 4}, TargetLimits::for_arch(9, 0));
  std::optional<PrunedConfig> big =
      tiny.check({{"tile_m", 128}, {"tile_n", 64}, {"tile_k", 32}, {"stages", 2}, {"warps", 4}});
  ASSERT_TRUE(big);
  EXPECT_EQ(big->constraint, "oversized");
}

TEST(TargetLimits, PerArchitecture) {
  EXPECT_EQ(TargetLimits::for_arch(9, 0).shared_bytes_per_block_optin, 227u * 1024);
  EXPECT_EQ(TargetLimits::for_arch(8, 0).shared_bytes_per_block_optin, 163u * 1024);
  EXPECT_EQ(TargetLimits::for_arch(8, 9).shared_bytes_per_block_optin, 99u * 1024);
  EXPECT_EQ(TargetLimits::for_arch(8, 6).max_threads_per_sm, 1536u);
  EXPECT_EQ(TargetLimits::for_arch(9, 0).max_threads_per_sm, 2048u);
}

} // namespace
} // namespace gpukit::codegen
