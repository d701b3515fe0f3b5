#include "dsl/reduction_engine.hpp"

#include "codegen/cpu_reduction.hpp"
#include "codegen/ir_printer.hpp"
#include "codegen/kernel_abi.hpp"
#include "codegen/passes/pipeline.hpp"
#include "dsl/array.hpp"
#include "dsl/kernel_dump.hpp"
#include "dsl/operand_pins.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/scheduling.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <mutex>

namespace gpukit::detail {

ReductionShape reduction_shape(const Shape& main, std::optional<int> axis, std::string_view what) {
  ReductionShape g;
  g.main = main;
  if (!axis) {
    g.extent = main.size();
    return g;
  }
  int rank = static_cast<int>(main.rank());
  int a = *axis < 0 ? *axis + rank : *axis;
  if (a < 0 || a >= rank)
    throw Error(ErrorKind::Shape,
                fmt::format("{}: axis {} is out of range for shape {} (axes {}..{})", what, *axis,
                            main.to_string(), -rank, rank - 1));
  g.axis = a;
  for (int k = 0; k < a; ++k)
    g.outer *= main[k];
  g.extent = main[a];
  for (int k = a + 1; k < rank; ++k)
    g.inner *= main[k];
  // An empty row is a column of no rows: the row kernel is compiled for a
  // row length, the column one gives every group the identity.
  g.kind = g.inner == 1 && g.extent > 0 ? codegen::ReductionKind::Row : codegen::ReductionKind::Column;
  return g;
}

Shape reduced_shape(const ReductionShape& g, bool keepdims) {
  if (g.axis < 0)
    return Shape::scalar();
  llvm::SmallVector<int64_t, Shape::kMaxRank> e;
  for (unsigned k = 0; k < g.main.rank(); ++k) {
    if (static_cast<int>(k) != g.axis)
      e.push_back(g.main[k]);
    else if (keepdims)
      e.push_back(1);
  }
  if (e.empty())
    return Shape::scalar();
  return Shape::of(e);
}

namespace {

bool reads_input(const ir::Program& p, const std::string& name) {
  return llvm::any_of(p.inputs(), [&](const ir::Operand& in) { return in.name == name; });
}

} // namespace

ReductionOperands classify_operands(const ir::ReductionPlan& plan, const ReductionShape& g,
                                    llvm::ArrayRef<NamedShape> operands, const Shape& output,
                                    std::string_view what) {
  ReductionOperands r;
  if (output.size() == 0 && g.main.size() == 0) {
    r.scope = ResultScope::Element; // nothing to read or write: no kernel runs
    return r;
  }
  const bool row = g.kind == codegen::ReductionKind::Row;
  const bool over_row = plan.epilogue && row && output.size() == g.main.size();
  if (over_row && output.size() != g.groups()) {
    r.scope = ResultScope::Element;
  } else if (output.size() != g.groups()) {
    std::string expected = fmt::format("{} ({})", reduced_shape(g, false).to_string(),
                                       g.axis < 0 ? "a single value" : "one value per position of the kept axes");
    if (plan.epilogue && row)
      expected += fmt::format(" or {} (the expression over every element)", g.main.to_string());
    throw Error(ErrorKind::Shape,
                fmt::format("{}: the output is {} ({} elements) but the reduction of {} gives {}", what,
                            output.to_string(), output.size(), g.main.to_string(), expected));
  }
  if (plan.epilogue && r.scope == ResultScope::Element && !row)
    throw Error(ErrorKind::Usage,
                fmt::format("{}: a reduction broadcast back over the reduced array must reduce the "
                            "last axis; assign the reduction to an array first", what));
  for (const NamedShape& op : operands) {
    bool in_stage = llvm::any_of(plan.stages, [&](const ir::ReduceStage& s) { return reads_input(s.body, op.name); });
    bool in_epilogue = plan.epilogue && reads_input(*plan.epilogue, op.name);
    bool per_element = in_stage || (in_epilogue && r.scope == ResultScope::Element);
    if (per_element) {
      if (op.shape == g.main)
        continue;
      if (row && op.shape.rank() == 1 && op.shape[0] == g.extent) {
        if (!llvm::is_contained(r.column_inputs, op.name))
          r.column_inputs.push_back(op.name);
        continue;
      }
      throw Error(ErrorKind::Shape,
                  fmt::format("{}: operand '{}' is {} but the reduced array is {}{}", what, op.name,
                              op.shape.to_string(), g.main.to_string(),
                              row ? fmt::format(" (a row reduction also reads an operand of shape [{}] "
                                                "per column)", g.extent)
                                  : std::string()));
    }
    if (!in_epilogue)
      continue; // not read at all (optimized away)
    // Read once per group by the epilogue: the result's shape.
    if (op.shape.size() == g.groups() &&
        (op.shape == output || op.shape == reduced_shape(g, false) || op.shape == reduced_shape(g, true)))
      continue;
    throw Error(ErrorKind::Shape,
                fmt::format("{}: operand '{}' is {}, read once per result outside the reduction, but "
                            "the result is {}", what, op.name, op.shape.to_string(),
                            reduced_shape(g, false).to_string()));
  }
  return r;
}

struct FusedCounters {
  std::mutex Lock;
  std::vector<std::pair<CUstream, std::unique_ptr<Array<int32_t>>>> PerStream;

  /// Zeroed counters for `stream`, at least `count` of them. Made (and
  /// copied to the device, synchronously) on a stream's first launch, or
  /// when a larger grid needs more: never on the hot path after that.
  const Array<int32_t>& for_stream(CUstream stream, long long count) {
    std::lock_guard<std::mutex> guard(Lock);
    for (auto& [s, counters] : PerStream)
      if (s == stream) {
        if (counters->size() < count)
          counters = std::make_unique<Array<int32_t>>(Array<int32_t>::full({count}, 0));
        return *counters;
      }
    PerStream.emplace_back(stream, std::make_unique<Array<int32_t>>(Array<int32_t>::full({count}, 0)));
    return *PerStream.back().second;
  }
};

CompiledReduction::CompiledReduction() = default;
CompiledReduction::~CompiledReduction() = default;

bool same_family(const ReductionShape& a, const ReductionShape& b) {
  return a.kind == b.kind && (a.kind != codegen::ReductionKind::Row || a.extent == b.extent);
}

std::unique_ptr<CompiledReduction> compile_reduction(ir::ReductionPlan plan, const ReductionShape& g,
                                                     const ReductionOperands& operands, bool aligned,
                                                     bool on_gpu) {
  auto c = std::make_unique<CompiledReduction>();
  plan.epilogue_scope =
      operands.scope == ResultScope::Element ? ir::EpilogueScope::Element : ir::EpilogueScope::Group;
  c->plan = std::move(plan);
  c->on_gpu = on_gpu;
  codegen::ReductionEmitOptions& o = c->options;
  o.kind = g.kind;
  o.vectorize = aligned;
  const bool row = g.kind == codegen::ReductionKind::Row;
  o.row_length = row ? g.extent : 0;
  // Row: about 8 elements per thread, so short rows still fill a block.
  o.block_size = row ? static_cast<unsigned>(std::clamp<long long>((g.extent / 8 + 31) / 32 * 32, 32, 1024)) : 256;
  o.column_inputs = operands.column_inputs;
  if (operands.scope == ResultScope::Element && !row)
    return c; // an empty array broadcast back (classify_operands): no kernel
  c->kernels = codegen::emit_reduction(c->plan, o);
  if (c->kernels.kernels.front().role == codegen::ReductionKernel::Role::Fused)
    c->counters = std::make_unique<FusedCounters>();
  dump_plan(c->kernels.kernels.front().cuda.name, describe_plan(*c, g));
  for (const codegen::ReductionKernel& k : c->kernels.kernels) {
    dump_kernel(k.cuda.name, k.cuda.source);
    if (on_gpu)
      c->loaded.push_back(&rt::Runtime::get().kernels().get({k.cuda.name, k.cuda.source, k.cuda.nvrtc_options}));
  }
  return c;
}

namespace {

void run_cpu(const CompiledReduction& c, const ReductionShape& g,
             llvm::function_ref<uint64_t(const std::string&)> input,
             llvm::function_ref<ir::Constant(const std::string&)> scalar, uint64_t destination) {
  codegen::ReductionArgs args;
  auto add_program = [&](const ir::Program& p) {
    for (const ir::Operand& in : p.inputs())
      if (!llvm::any_of(args.inputs, [&](const auto& kv) { return kv.first == in.name; }))
        args.inputs.push_back({in.name, reinterpret_cast<const void*>(static_cast<uintptr_t>(input(in.name)))});
    for (const ir::ScalarParam& s : p.scalars())
      if (!ir::is_stage_value_name(s.name) &&
          !llvm::any_of(args.scalars, [&](const auto& kv) { return kv.first == s.name; }))
        args.scalars.push_back({s.name, scalar(s.name)});
  };
  for (const ir::ReduceStage& s : c.plan.stages)
    add_program(s.body);
  if (c.plan.epilogue)
    add_program(*c.plan.epilogue);
  args.column_inputs = c.options.column_inputs;
  rt::Runtime::get().scheduling().dispatch().launch_host(rt::sched::current_task(), [&] {
    codegen::evaluate_reduction(c.plan, {g.outer, g.extent, g.inner}, args,
                                reinterpret_cast<void*>(static_cast<uintptr_t>(destination)));
  });
}

void run_gpu(const CompiledReduction& c, const ReductionShape& g,
             llvm::function_ref<uint64_t(const std::string&)> input,
             llvm::function_ref<ir::Constant(const std::string&)> scalar, uint64_t destination) {
  rt::Runtime& runtime = rt::Runtime::get();
  unsigned sms = runtime.device() ? static_cast<unsigned>(runtime.device()->sm_count) : 132;
  std::vector<Array<uint8_t>> workspace; // stage values and partials, freed stream-ordered
  workspace.reserve(2 * c.plan.stages.size());
  OperandPins scratch; // destroyed before `workspace`: pins die before their buffers
  std::vector<uint64_t> stage_address(c.plan.stages.size(), 0);
  const long long groups = g.groups();
  uint64_t partials = 0;
  long long parts = 0;

  for (size_t i = 0; i < c.kernels.kernels.size(); ++i) {
    const codegen::ReductionKernel& k = c.kernels.kernels[i];
    bool last_stage = k.stage + 1 == c.plan.stages.size();
    DType acc = ir::reduce_accumulator_type(c.plan.stages[k.stage].op, c.plan.stages[k.stage].element);
    unsigned block = c.options.block_size;
    unsigned grid = 1;
    uint64_t counters = 0;
    if (k.role == codegen::ReductionKernel::Role::Partial || k.role == codegen::ReductionKernel::Role::Fused) {
      if (g.kind == codegen::ReductionKind::Full) {
        grid = codegen::full_grid(g.extent, c.kernels.pack_width, block, sms);
        parts = grid;
      } else {
        unsigned splits = codegen::column_splits(g.outer, g.extent, g.inner, sms, c.kernels.pack_width,
                                                 k.role == codegen::ReductionKernel::Role::Fused);
        // One 1-D grid: column blocks x outer slices x row slices.
        grid = codegen::column_blocks(g.inner, c.kernels.pack_width) * static_cast<unsigned>(g.outer) * splits;
        parts = splits;
      }
      ir::ReduceOp op = c.plan.stages[k.stage].op;
      // argmin/argmax partials are (value, index) pairs of 16 bytes.
      long long bytes = op == ir::ReduceOp::ArgMin || op == ir::ReduceOp::ArgMax ? 16 : size_of(acc);
      workspace.emplace_back(Shape(static_cast<int64_t>(parts * std::max<long long>(groups, 1) * bytes + 16)));
      scratch.add(workspace.back()); // spillable like any array: pinned until enqueued
      partials = workspace.back().address();
      if (k.role == codegen::ReductionKernel::Role::Fused) {
        long long blocks = codegen::column_blocks(g.inner, c.kernels.pack_width) * g.outer;
        const Array<int32_t>& block_counters =
            c.counters->for_stream(Buffer::use_stream(), std::max<long long>(blocks, 1));
        scratch.add(block_counters);
        counters = block_counters.address();
      }
    } else if (k.role == codegen::ReductionKernel::Role::Finalize) {
      grid = g.kind == codegen::ReductionKind::Full ? 1 : static_cast<unsigned>((groups + block - 1) / block);
      if (!last_stage) {
        workspace.emplace_back(Shape(static_cast<int64_t>(groups * 8 + 16)));
        scratch.add(workspace.back());
        stage_address[k.stage] = workspace.back().address();
      }
    } else {
      grid = static_cast<unsigned>(g.outer);
    }
    llvm::SmallVector<uint64_t, 16> slots;
    for (const codegen::ReductionParam& p : k.params) {
      using K = codegen::ReductionParam::Kind;
      switch (p.kind) {
      case K::Input: slots.push_back(input(p.name)); break;
      case K::Scalar: {
        uint64_t bits = 0;
        codegen::write_scalar_argument(scalar(p.name), p.type, &bits);
        slots.push_back(bits);
        break;
      }
      case K::StageValue: slots.push_back(stage_address[std::stoul(p.name.substr(1))]); break;
      case K::Destination:
        slots.push_back(k.role == codegen::ReductionKernel::Role::Finalize && !last_stage ? stage_address[k.stage]
                                                                                         : destination);
        break;
      case K::Partials: slots.push_back(partials); break;
      case K::Counters: slots.push_back(counters); break;
      case K::Geometry: {
        long long v = p.name == "outer" ? g.outer : p.name == "extent" ? g.extent : p.name == "inner" ? g.inner
                      : p.name == "groups" ? groups : p.name == "parts" ? parts : g.extent;
        slots.push_back(static_cast<uint64_t>(v));
        break;
      }
      }
    }
    llvm::SmallVector<void*, 16> args;
    for (uint64_t& s : slots)
      args.push_back(&s);
    runtime.launch(*c.loaded[i], {grid, block, 0}, args.data());
  }
}

} // namespace

void run_reduction(const CompiledReduction& c, const ReductionShape& g,
                   llvm::function_ref<uint64_t(const std::string&)> input,
                   llvm::function_ref<ir::Constant(const std::string&)> scalar, uint64_t destination,
                   std::string_view what) {
  if (g.groups() == 0 || c.kernels.kernels.empty())
    return;
  for (const ir::ReduceStage& s : c.plan.stages)
    if (g.extent == 0 && (s.op == ir::ReduceOp::ArgMin || s.op == ir::ReduceOp::ArgMax))
      throw Error(ErrorKind::Usage, fmt::format("{}: {} over an empty axis of {} has no index", what,
                                                ir::reduce_op_name(s.op), g.main.to_string()));
  if (c.on_gpu)
    run_gpu(c, g, input, scalar, destination);
  else
    run_cpu(c, g, input, scalar, destination);
}

std::string describe_plan(const CompiledReduction& c, const ReductionShape& g) {
  std::string kind = g.kind == codegen::ReductionKind::Full  ? "full"
                     : g.kind == codegen::ReductionKind::Row ? "row (last axis)"
                                                             : fmt::format("column (axis {})", g.axis);
  std::string out = fmt::format("reduction plan: {} reduction of {} as [outer {}, extent {}, inner {}]; {} "
                                "kernel{}\n",
                                kind, g.main.to_string(), g.outer, g.extent, g.inner, c.kernels.kernels.size(),
                                c.kernels.kernels.size() == 1 ? "" : "s");
  out += ir::print(c.plan);
  for (const codegen::ReductionKernel& k : c.kernels.kernels) {
    std::string role = k.role == codegen::ReductionKernel::Role::Row       ? "every stage and the epilogue, one block per row"
                       : k.role == codegen::ReductionKernel::Role::Partial ? fmt::format("stage r{}: partial results", k.stage)
                       : k.role == codegen::ReductionKernel::Role::Fused
                           ? fmt::format("stage r{}: partial results, added in order by the last block of each column block", k.stage)
                           : fmt::format("stage r{}: combines the partials in order", k.stage);
    out += fmt::format("kernel {}: {}\n", k.cuda.name, role);
  }
  return out;
}

} // namespace gpukit::detail
