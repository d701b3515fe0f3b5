#include "dsl/reduction_kernel.hpp"

#include "codegen/cpu_reduction.hpp"
#include "codegen/kernel_abi.hpp"
#include "codegen/passes/pipeline.hpp"
#include "codegen/reduction_emitter.hpp"
#include "dsl/array.hpp"
#include "dsl/array_base.hpp"
#include "dsl/kernel_dump.hpp"
#include "dsl/operand_layout.hpp"
#include "dsl/operand_pins.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::detail {

namespace {

struct Geometry {
  codegen::ReductionKind kind = codegen::ReductionKind::Full;
  long long outer = 1, extent = 0, inner = 1;
  Shape main;
  uint32_t column_mask = 0; ///< leaves of shape [cols], read per column
};

struct BuildContext {
  ir::ReductionPlan* plan;
  const OperandLayout* layout;
};

Geometry geometry_of(const AssignmentCall& call, const std::string& what) {
  Geometry g;
  if (call.leaves.empty())
    throw Error(ErrorKind::Shape, fmt::format("{} reduces no array", what));
  g.main = call.leaves[0]->shape();
  for (const ArrayBase* l : call.leaves)
    if (l->shape().rank() > g.main.rank())
      g.main = l->shape();
  int axis = -100;
  for (const ir::Constant& c : call.scalars) {
    if (!is_axis_constant(c))
      continue;
    int a = static_cast<int>(c.i);
    if (a < 0)
      a += static_cast<int>(g.main.rank());
    if (a < 0 || a >= static_cast<int>(g.main.rank()))
      throw Error(ErrorKind::Shape, fmt::format("{}: axis {} is out of range for shape {}", what, c.i,
                                                g.main.to_string()));
    if (axis != -100 && axis != a)
      throw Error(ErrorKind::Usage, fmt::format("{}: every reduction of one assignment must reduce "
                                                "the same axis (given {} and {})", what, axis, a));
    axis = a;
  }
  if (axis == -100) {
    g.extent = g.main.size();
  } else {
    for (int k = 0; k < axis; ++k)
      g.outer *= g.main[k];
    g.extent = g.main[axis];
    for (unsigned k = axis + 1; k < g.main.rank(); ++k)
      g.inner *= g.main[k];
    g.kind = g.inner == 1 ? codegen::ReductionKind::Row : codegen::ReductionKind::Column;
  }
  for (size_t k = 0; k < call.leaves.size(); ++k) {
    const Shape& s = call.leaves[k]->shape();
    if (s == g.main)
      continue;
    bool per_column = g.kind == codegen::ReductionKind::Row && s.rank() == 1 && s[0] == g.extent;
    if (!per_column)
      throw Error(ErrorKind::Shape,
                  fmt::format("{}: operand {} is {} but the reduced array is {} (only a row "
                              "reduction reads an operand of shape [{}] per column)",
                              what, k, s.to_string(), g.main.to_string(), g.extent));
    g.column_mask |= 1u << k;
  }
  return g;
}

} // namespace

struct CompiledReduction {
  Geometry key;
  bool on_gpu = false;
  bool aligned = false;
  ir::ReductionPlan plan;
  codegen::ReductionEmitOptions options;
  codegen::ReductionKernels kernels;
  std::vector<const rt::Kernel*> loaded;
  std::vector<std::pair<std::string, unsigned>> input_leaf; ///< input name -> leaf
};

ReductionVariants::ReductionVariants(const AssignmentType& type) : Type(type) {}
ReductionVariants::~ReductionVariants() = default;

ir::NodeId build_reduction(IrBuilder& b, ir::ReduceOp op, DType element, bool has_axis,
                           ir::NodeId (*inner)(IrBuilder&)) {
  auto* ctx = static_cast<BuildContext*>(b.reduction_context);
  if (!ctx)
    throw Error(ErrorKind::Internal, "a reduction reached the elementwise kernel builder");
  ir::Program body;
  IrBuilder nested(body, *ctx->layout);
  nested.continue_from(b);
  nested.reduction_context = ctx;
  ir::NodeId v = inner(nested);
  body.add_output("v", element, v);
  b.continue_from(nested);
  if (has_axis)
    b.skip_scalar();
  unsigned k = ir::add_stage(*ctx->plan, op, body, element);
  return b.program().add_scalar(ir::stage_value_name(k), ctx->plan->stages[k].result, /*weak=*/false);
}

namespace {

bool same_key(const Geometry& a, const Geometry& b) {
  return a.kind == b.kind && a.column_mask == b.column_mask &&
         (a.kind != codegen::ReductionKind::Row || a.extent == b.extent);
}

std::unique_ptr<CompiledReduction> build(const AssignmentType& type, const AssignmentCall& call,
                                         const Geometry& g, bool on_gpu, bool aligned) {
  auto c = std::make_unique<CompiledReduction>();
  c->key = g;
  c->on_gpu = on_gpu;
  c->aligned = aligned;
  OperandLayout layout = make_layout(call);
  ir::Program top;
  top.label = make_label(type, call, layout);
  c->plan.label = top.label;
  BuildContext ctx{&c->plan, &layout};
  IrBuilder builder(top, layout);
  builder.reduction_context = &ctx;
  type.build(builder);
  const ir::Output& out = top.outputs().front();
  const ir::Node& value = top.node(out.value);
  bool plain = value.op == ir::Op::Scalar &&
               top.scalars()[value.index].name == ir::stage_value_name(c->plan.stages.size() - 1) &&
               out.type == c->plan.stages.back().result;
  if (!plain) {
    c->plan.epilogue = ir::optimize(top);
    if (g.kind != codegen::ReductionKind::Row)
      throw Error(ErrorKind::Usage,
                  fmt::format("{}: a reduction used inside a larger expression must reduce the last "
                              "axis (keepdims, broadcast back over the row); assign the reduction "
                              "to an array first", describe(type, call)));
  } else if (out.type != c->plan.stages.back().result) {
    c->plan.epilogue = ir::optimize(top);
  }
  for (size_t k = 0; k < layout.input_names.size(); ++k)
    c->input_leaf.push_back({layout.input_names[k], layout.input_leaf[k]});
  c->options.kind = g.kind;
  c->options.vectorize = aligned;
  c->options.row_length = g.kind == codegen::ReductionKind::Row ? g.extent : 0;
  c->options.block_size = g.kind == codegen::ReductionKind::Row
                              ? static_cast<unsigned>(std::clamp<long long>((g.extent / 8 + 31) / 32 * 32, 32, 1024))
                              : 256;
  for (size_t k = 0; k < call.leaves.size(); ++k)
    if (g.column_mask & (1u << k))
      c->options.column_inputs.push_back(layout.leaf_names[k]);
  c->kernels = codegen::emit_reduction(c->plan, c->options);
  for (const codegen::ReductionKernel& k : c->kernels.kernels) {
    dump_kernel(k.cuda.name, k.cuda.source);
    if (on_gpu)
      c->loaded.push_back(&rt::Runtime::get().kernels().get({k.cuda.name, k.cuda.source, k.cuda.nvrtc_options}));
  }
  return c;
}

const CompiledReduction& variant(ReductionVariants& v, const AssignmentCall& call, const Geometry& g) {
  rt::Runtime& runtime = rt::Runtime::get();
  bool aligned = true;
  for (const ArrayBase* l : call.leaves)
    aligned = aligned && l->address() % 16 == 0;
  for (const ArrayBase* o : call.outputs)
    aligned = aligned && o->address() % 16 == 0;
  std::lock_guard<std::mutex> guard(v.Lock);
  for (const auto& c : v.Variants)
    if (same_key(c->key, g) && c->on_gpu == runtime.on_gpu() && c->aligned == aligned)
      return *c;
  v.Variants.push_back(build(v.type(), call, g, runtime.on_gpu(), aligned));
  return *v.Variants.back();
}

const ArrayBase* leaf_of(const CompiledReduction& c, const AssignmentCall& call, const std::string& name) {
  for (const auto& [n, leaf] : c.input_leaf)
    if (n == name)
      return call.leaves[leaf];
  throw Error(ErrorKind::Internal, fmt::format("reduction kernel reads an unknown input '{}'", name));
}

const ir::Constant& scalar_of(const AssignmentCall& call, const std::string& name) {
  unsigned index = static_cast<unsigned>(std::stoul(name.substr(1)));
  return call.scalars[index];
}

// `g` is this call's geometry: a cached variant's key may come from an
// earlier call of another shape (Full and Column variants do not depend on it).
void check_output(const AssignmentType& type, const AssignmentCall& call, const CompiledReduction& c,
                  const Geometry& g) {
  long long want = c.plan.epilogue && g.kind == codegen::ReductionKind::Row && c.plan.epilogue->nodes().size() > 1 &&
                           g.main.size() == call.outputs[0]->size()
                       ? g.main.size()
                       : g.outer * g.inner;
  if (call.outputs[0]->size() != want)
    throw Error(ErrorKind::Shape,
                fmt::format("{}: the output is {} ({} elements) but the reduction of {} gives {} "
                            "elements", describe(type, call), call.outputs[0]->shape().to_string(),
                            call.outputs[0]->size(), g.main.to_string(), want));
}

void run_cpu(const CompiledReduction& c, const AssignmentCall& call, const Geometry& g) {
  codegen::ReductionArgs args;
  for (const auto& [n, leaf] : c.input_leaf)
    args.inputs.push_back({n, call.leaves[leaf]->allocation().host_ptr()});
  args.column_inputs = c.options.column_inputs;
  for (size_t k = 0; k < call.scalars.size(); ++k)
    args.scalars.push_back({fmt::format("s{}", k), call.scalars[k]});
  codegen::evaluate_reduction(c.plan, {g.outer, g.extent, g.inner}, args, call.outputs[0]->allocation().host_ptr());
}

void run_gpu(const CompiledReduction& c, const AssignmentCall& call, const Geometry& g) {
  rt::Runtime& runtime = rt::Runtime::get();
  unsigned sms = runtime.device() ? static_cast<unsigned>(runtime.device()->sm_count) : 132;
  std::vector<Array<uint8_t>> workspace; // stage values and partials, freed stream-ordered
  OperandPins scratch; // destroyed before `workspace`: pins die before their buffers
  std::vector<uint64_t> stage_address(c.plan.stages.size(), 0);
  const long long groups = g.outer * g.inner;
  uint64_t partials = 0;
  long long parts = 0;

  for (size_t i = 0; i < c.kernels.kernels.size(); ++i) {
    const codegen::ReductionKernel& k = c.kernels.kernels[i];
    bool last_stage = k.stage + 1 == c.plan.stages.size();
    DType acc = ir::reduce_accumulator_type(c.plan.stages[k.stage].op, c.plan.stages[k.stage].element);
    unsigned block = c.options.block_size;
    unsigned grid = 1, grid_y = 1, grid_z = 1;
    if (k.role == codegen::ReductionKernel::Role::Partial) {
      if (g.kind == codegen::ReductionKind::Full) {
        grid = codegen::full_grid(g.extent, c.kernels.pack_width, block, sms);
        parts = grid;
      } else {
        grid = (codegen::column_threads(g.inner, c.kernels.pack_width) + block - 1) / block;
        grid_y = static_cast<unsigned>(g.outer);
        grid_z = codegen::column_splits(g.outer, g.extent, g.inner, block, sms, c.kernels.pack_width);
        parts = grid_z;
      }
      ir::ReduceOp op = c.plan.stages[k.stage].op;
      // argmin/argmax partials are (value, index) pairs of 16 bytes.
      long long bytes = op == ir::ReduceOp::ArgMin || op == ir::ReduceOp::ArgMax ? 16 : size_of(acc);
      workspace.emplace_back(Shape(static_cast<int64_t>(parts * std::max<long long>(groups, 1) * bytes + 16)));
      scratch.add(workspace.back()); // spillable like any array: pinned until enqueued
      partials = workspace.back().address();
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
    std::vector<uint64_t> slots;
    for (const codegen::ReductionParam& p : k.params) {
      using K = codegen::ReductionParam::Kind;
      switch (p.kind) {
      case K::Input: slots.push_back(leaf_of(c, call, p.name)->address()); break;
      case K::Scalar: {
        uint64_t bits = 0;
        codegen::write_scalar_argument(scalar_of(call, p.name), p.type, &bits);
        slots.push_back(bits);
        break;
      }
      case K::StageValue: slots.push_back(stage_address[std::stoul(p.name.substr(1))]); break;
      case K::Destination:
        slots.push_back(k.role == codegen::ReductionKernel::Role::Finalize && !last_stage ? stage_address[k.stage]
                                                                                         : call.outputs[0]->address());
        break;
      case K::Partials: slots.push_back(partials); break;
      case K::Geometry: {
        long long v = p.name == "outer" ? g.outer : p.name == "extent" ? g.extent : p.name == "inner" ? g.inner
                      : p.name == "groups" ? groups : p.name == "parts" ? parts : g.extent;
        slots.push_back(static_cast<uint64_t>(v));
        break;
      }
      }
    }
    std::vector<void*> args;
    for (uint64_t& s : slots)
      args.push_back(&s);
    (void)grid_y;
    (void)grid_z;
    // rt::LaunchShape is one-dimensional: column kernels fold y and z into x.
    runtime.launch(*c.loaded[i], {grid * grid_y * grid_z, block, 0}, args.data());
  }
}

} // namespace

void execute_reduction(ReductionVariants& v, const AssignmentCall& call) {
  OperandPins pins; // resident until the launches are enqueued (see dsl/operand_pins.hpp)
  pins.add(call.outputs);
  pins.add(call.leaves);
  std::string what = describe(v.type(), call);
  Geometry g = geometry_of(call, what);
  const CompiledReduction& c = variant(v, call, g);
  check_output(v.type(), call, c, g);
  if (g.outer * g.inner == 0)
    return;
  for (const ir::ReduceStage& s : c.plan.stages)
    if (g.extent == 0 && (s.op == ir::ReduceOp::ArgMin || s.op == ir::ReduceOp::ArgMax))
      throw Error(ErrorKind::Usage, fmt::format("{}: {} over an empty axis of {} has no index", what,
                                                ir::reduce_op_name(s.op), g.main.to_string()));
  if (c.on_gpu)
    run_gpu(c, call, g);
  else
    run_cpu(c, call, g);
}

KernelInfo inspect_reduction(ReductionVariants& v, const AssignmentCall& call) {
  Geometry g = geometry_of(call, describe(v.type(), call));
  const CompiledReduction& c = variant(v, call, g);
  KernelInfo info;
  info.label = c.plan.label;
  info.ir = ir::print(c.plan);
  for (const codegen::ReductionKernel& k : c.kernels.kernels) {
    info.name += (info.name.empty() ? "" : " ") + k.cuda.name;
    info.source += k.cuda.source + "\n";
  }
  info.pack_width = c.kernels.pack_width;
  return info;
}

Shape reduction_result_shape(llvm::ArrayRef<const ArrayBase*> leaves, llvm::ArrayRef<ir::Constant> scalars,
                             bool keepdims) {
  AssignmentCall call{{}, leaves, scalars, nullptr};
  Geometry g = geometry_of(call, "eval(reduction)");
  if (g.kind == codegen::ReductionKind::Full)
    return Shape(1);
  std::array<int64_t, 4> e{};
  unsigned rank = 0;
  int axis = -1;
  for (const ir::Constant& c : scalars)
    if (is_axis_constant(c))
      axis = static_cast<int>(c.i < 0 ? c.i + g.main.rank() : c.i);
  for (unsigned k = 0; k < g.main.rank(); ++k) {
    if (static_cast<int>(k) == axis) {
      if (keepdims)
        e[rank++] = 1;
      continue;
    }
    e[rank++] = g.main[k];
  }
  if (rank == 0)
    return Shape(1);
  switch (rank) {
  case 1: return Shape({e[0]});
  case 2: return Shape({e[0], e[1]});
  case 3: return Shape({e[0], e[1], e[2]});
  default: return Shape({e[0], e[1], e[2], e[3]});
  }
}

} // namespace gpukit::detail
