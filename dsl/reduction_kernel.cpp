#include "dsl/reduction_kernel.hpp"

#include "dsl/reduction_engine.hpp"

#include "dsl/array_base.hpp"
#include "dsl/operand_layout.hpp"
#include "dsl/operand_pins.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

namespace gpukit::detail {

namespace {

struct BuildContext {
  ir::ReductionPlan* plan;
  const OperandLayout* layout;
};

/// The array with the most axes (the first of them): the reduced one.
const Shape& main_shape(const AssignmentCall& call, const std::string& what) {
  if (call.leaves.empty())
    throw Error(ErrorKind::Shape, fmt::format("{} reduces no array", what));
  const Shape* main = &call.leaves[0]->shape();
  for (const ArrayBase* l : call.leaves)
    if (l->shape().rank() > main->rank())
      main = &l->shape();
  return *main;
}

ReductionShape shape_of_call(const AssignmentCall& call, const std::string& what) {
  const Shape& main = main_shape(call, what);
  const int rank = static_cast<int>(main.rank());
  std::optional<int> axis;
  for (const ir::Constant& c : call.scalars) {
    if (!is_axis_constant(c))
      continue;
    int a = static_cast<int>(c.i);
    if (a < 0 && a + rank >= 0)
      a += rank;
    if (axis && *axis != a)
      throw Error(ErrorKind::Usage, fmt::format("{}: every reduction of one assignment must reduce "
                                                "the same axis (given {} and {})", what, *axis, a));
    axis = a;
  }
  return reduction_shape(main, axis, what);
}

/// How a variant was made: what must hold for a call to reuse it.
struct ReductionKey {
  ReductionShape family;
  bool on_gpu = false, aligned = false, per_group = true;
  /// Per operand slot (output, then leaves): the first slot that is the same view.
  llvm::SmallVector<uint8_t, 12> alias;
  /// Bit k: leaf k has the reduced array's shape.
  uint32_t main_leaves = 0;
};

ReductionKey key_of(const AssignmentCall& call, const ReductionShape& g) {
  ReductionKey key;
  key.family = g;
  key.on_gpu = rt::Runtime::get().on_gpu();
  key.per_group = call.outputs[0]->size() == g.groups();
  llvm::SmallVector<const ArrayBase*, 12> slots(call.outputs.begin(), call.outputs.end());
  slots.append(call.leaves.begin(), call.leaves.end());
  key.aligned = true;
  for (size_t s = 0; s < slots.size(); ++s) {
    size_t first = s;
    for (size_t j = 0; j < s; ++j)
      if (slots[j]->address() == slots[s]->address() && slots[j]->same_view_as(*slots[s])) {
        first = j;
        break;
      }
    key.alias.push_back(static_cast<uint8_t>(first));
    key.aligned = key.aligned && slots[s]->address() % 16 == 0;
  }
  for (size_t k = 0; k < call.leaves.size(); ++k)
    if (call.leaves[k]->shape() == g.main)
      key.main_leaves |= 1u << k;
  return key;
}

bool same_key(const ReductionKey& a, const ReductionKey& b) {
  return same_family(a.family, b.family) && a.on_gpu == b.on_gpu && a.aligned == b.aligned &&
         a.per_group == b.per_group && a.alias == b.alias && a.main_leaves == b.main_leaves;
}

} // namespace

struct ReductionVariant {
  ReductionKey key;
  std::unique_ptr<CompiledReduction> compiled;
  /// Per plan input: its name and the leaf it reads.
  std::vector<std::pair<std::string, unsigned>> input_leaf;
  /// Per leaf: how it is read (to check a later call's shapes cheaply).
  enum class Read : uint8_t { Main, Column, Group };
  llvm::SmallVector<Read, 8> leaf_read;
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

std::vector<NamedShape> named_operands(const AssignmentCall& call, const OperandLayout& layout) {
  std::vector<NamedShape> ops;
  for (size_t k = 0; k < layout.input_names.size(); ++k)
    ops.push_back({layout.input_names[k], call.leaves[layout.input_leaf[k]]->shape()});
  return ops;
}

std::unique_ptr<ReductionVariant> build(const AssignmentType& type, const AssignmentCall& call,
                                        const ReductionShape& g, const ReductionKey& key) {
  auto v = std::make_unique<ReductionVariant>();
  v->key = key;
  OperandLayout layout = make_layout(call);
  ir::Program top;
  top.label = make_label(type, call, layout);
  ir::ReductionPlan plan;
  plan.label = top.label;
  BuildContext ctx{&plan, &layout};
  IrBuilder builder(top, layout);
  builder.reduction_context = &ctx;
  type.build(builder);
  ir::set_epilogue(plan, top);
  std::string what = describe(type, call);
  ReductionOperands operands =
      classify_operands(plan, g, named_operands(call, layout), call.outputs[0]->shape(), what);
  for (size_t k = 0; k < layout.input_names.size(); ++k)
    v->input_leaf.push_back({layout.input_names[k], layout.input_leaf[k]});
  for (size_t k = 0; k < call.leaves.size(); ++k) {
    const std::string& name = layout.input_names[layout.leaf_input[k]];
    v->leaf_read.push_back(call.leaves[k]->shape() == g.main                     ? ReductionVariant::Read::Main
                           : llvm::is_contained(operands.column_inputs, name) ? ReductionVariant::Read::Column
                                                                              : ReductionVariant::Read::Group);
  }
  v->compiled = compile_reduction(std::move(plan), g, operands, key.aligned, key.on_gpu);
  return v;
}

/// Whether `call` reads its operands as variant `v` was made to (the
/// key says which leaves have the main shape; the others are checked here).
bool shapes_fit(const ReductionVariant& v, const AssignmentCall& call, const ReductionShape& g) {
  const bool element = v.compiled->plan.epilogue && v.compiled->plan.epilogue_scope == ir::EpilogueScope::Element;
  if (call.outputs[0]->size() != (element ? g.main.size() : g.groups()))
    return false;
  for (size_t k = 0; k < call.leaves.size(); ++k) {
    const Shape& s = call.leaves[k]->shape();
    switch (v.leaf_read[k]) {
    case ReductionVariant::Read::Main: break;
    case ReductionVariant::Read::Column:
      if (s.rank() != 1 || s[0] != g.extent)
        return false;
      break;
    case ReductionVariant::Read::Group:
      if (s.size() != g.groups())
        return false;
      break;
    }
  }
  return true;
}

const ReductionVariant& variant(ReductionVariants& variants, const AssignmentCall& call, const ReductionShape& g) {
  ReductionKey key = key_of(call, g);
  std::lock_guard<std::mutex> guard(variants.Lock);
  for (const auto& v : variants.Variants)
    if (same_key(v->key, key) && shapes_fit(*v, call, g))
      return *v;
  // New, or shapes that do not fit: building says which operand and why.
  variants.Variants.push_back(build(variants.type(), call, g, key));
  return *variants.Variants.back();
}

} // namespace

void execute_reduction(ReductionVariants& variants, const AssignmentCall& call) {
  OperandPins pins; // resident until the launches are enqueued (see dsl/operand_pins.hpp)
  pins.add(call.outputs);
  pins.add(call.leaves);
  std::string what = describe(variants.type(), call);
  ReductionShape g = shape_of_call(call, what);
  const ReductionVariant& v = variant(variants, call, g);
  auto input = [&](const std::string& name) -> uint64_t {
    for (const auto& [n, leaf] : v.input_leaf)
      if (n == name)
        return call.leaves[leaf]->address();
    throw Error(ErrorKind::Internal, fmt::format("reduction kernel reads an unknown input '{}'", name));
  };
  auto scalar = [&](const std::string& name) -> ir::Constant {
    return call.scalars[static_cast<unsigned>(std::stoul(name.substr(1)))];
  };
  run_reduction(*v.compiled, g, input, scalar, call.outputs[0]->address(), what);
}

KernelInfo inspect_reduction(ReductionVariants& variants, const AssignmentCall& call) {
  ReductionShape g = shape_of_call(call, describe(variants.type(), call));
  const ReductionVariant& v = variant(variants, call, g);
  const CompiledReduction& c = *v.compiled;
  KernelInfo info;
  info.label = c.plan.label;
  info.ir = describe_plan(c, g);
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
  return reduced_shape(shape_of_call(call, "eval(reduction)"), keepdims);
}

} // namespace gpukit::detail
