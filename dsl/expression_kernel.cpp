#include "dsl/expression_kernel.hpp"

#include "codegen/cpu_evaluator.hpp"
#include "codegen/cuda_emitter.hpp"
#include "codegen/cuda_strided_emitter.hpp"
#include "codegen/ir_printer.hpp"
#include "codegen/kernel_abi.hpp"
#include "codegen/passes/pipeline.hpp"
#include "codegen/passes/type_infer.hpp"
#include "dsl/array_base.hpp"
#include "dsl/broadcast.hpp"
#include "dsl/kernel_dump.hpp"
#include "dsl/tuned_launch.hpp"
#include "dsl/operand_layout.hpp"
#include "dsl/operand_pins.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/scheduling.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/ErrorHandling.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

namespace gpukit {

namespace {

struct Counters {
  std::atomic<uint64_t> ir_builds{0};
  std::atomic<uint64_t> gpu_launches{0};
  std::atomic<uint64_t> cpu_runs{0};
};

Counters& counters() {
  static Counters c;
  return c;
}

} // namespace

ExpressionStats expression_stats() {
  Counters& c = counters();
  return {c.ir_builds.load(), c.gpu_launches.load(), c.cpu_runs.load()};
}

namespace detail {

/// A variant, built once: the optimised program (the CPU fallback runs it
/// and its scalar types say how to pass values), the emitted CUDA, the
/// loaded kernel (GPU only) and how the call's operands map to parameters.
struct CompiledExpression {
  ir::Program program;
  std::string label;
  codegen::CudaKernel cuda;
  codegen::EmitOptions options;
  TunedLaunch launch; ///< tuned or heuristic shape and grid (dsl/tuned_launch.hpp)
  const rt::Kernel* kernel = nullptr;
  /// Per program input: the array leaf it reads.
  llvm::SmallVector<uint8_t, 8> input_leaf;
  /// Per program scalar: the scalar leaf it receives, and its type.
  llvm::SmallVector<uint8_t, 8> scalar_leaf;
  llvm::SmallVector<DType, 8> scalar_types;
  bool index64 = false;
  /// Not flat: views or broadcast operands (codegen/strided_layout.hpp).
  codegen::StridedLayout strided;
};

namespace {

// --- Checks (every call) -----------------------------------------------------------

[[noreturn]] void throw_shape_mismatch(const AssignmentType& type, const AssignmentCall& call,
                                       size_t output, std::optional<size_t> leaf) {
  OperandLayout layout = make_layout(call);
  const Shape& expected = call.outputs[0]->shape();
  std::string culprit = leaf ? fmt::format("operand {} is {}", layout.leaf_names[*leaf],
                                           call.leaves[*leaf]->shape().to_string())
                             : fmt::format("{} is {}", layout.output_names[output],
                                           call.outputs[output]->shape().to_string());
  throw Error(ErrorKind::Shape, fmt::format("shape mismatch in {}: {} is {} but {}",
                                            describe(type, call), layout.output_names[0],
                                            expected.to_string(), culprit));
}

/// Writing through views: a broadcast view's elements repeat, and an
/// operand that is another view of an output's memory could be read after
/// the kernel overwrote it.
void check_views(const AssignmentType& type, const AssignmentCall& call) {
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    const ArrayBase& out = *call.outputs[o];
    if (out.size() == 0)
      continue;
    for (unsigned a = 0; a < out.shape().rank(); ++a) {
      if (out.strides()[a] != 0 || out.shape()[a] < 2)
        continue;
      OperandLayout layout = make_layout(call);
      throw Error(ErrorKind::Usage,
                  fmt::format("cannot assign to {} in {}: it is a broadcast view (shape {}, axis {} "
                              "repeats one element with stride 0), so its elements are not "
                              "distinct; assign to the array it was made from",
                              layout.output_names[o], describe(type, call),
                              out.shape().to_string(), a));
    }
    for (size_t k = 0; k < call.leaves.size(); ++k) {
      const ArrayBase& leaf = *call.leaves[k];
      if (!leaf.may_overlap(out) || leaf.same_view_as(out))
        continue;
      OperandLayout layout = make_layout(call);
      throw Error(ErrorKind::Usage,
                  fmt::format("operand {} of {} is another view of the memory output {} writes "
                              "(overlapping elements, other strides or offset), so the kernel could "
                              "read elements it has already overwritten; copy the operand first: "
                              "{}.copy()",
                              layout.leaf_names[k], describe(type, call), layout.output_names[o],
                              layout.leaf_names[k]));
    }
  }
}

void check_operands(const AssignmentType& type, const AssignmentCall& call) {
  const Shape& shape = call.outputs[0]->shape();
  for (size_t o = 1; o < call.outputs.size(); ++o)
    if (!(call.outputs[o]->shape() == shape))
      throw_shape_mismatch(type, call, o, std::nullopt);
  for (size_t k = 0; k < call.leaves.size(); ++k)
    if (!(call.leaves[k]->shape() == shape) && !broadcasts_to(call.leaves[k]->shape(), shape))
      throw_shape_mismatch(type, call, 0, k);
  check_views(type, call);
  for (size_t o = 1; o < call.outputs.size(); ++o) {
    for (size_t p = 0; p < o; ++p) {
      if (call.outputs[o]->address() == 0 || call.outputs[o]->address() != call.outputs[p]->address())
        continue;
      OperandLayout layout = make_layout(call);
      throw Error(ErrorKind::Usage,
                  fmt::format("outputs {} and {} of {} are the same array ({}); each output of one "
                              "kernel must be a different array",
                              p + 1, o + 1, describe(type, call), layout.output_names[p]));
    }
  }
}

bool vectorization_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("GPUKIT_VECTORIZE");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return enabled;
}

/// Per scalar slot, the first slot it shares a kernel scalar with; left
/// empty when none is shared (or there are too many slots to number).
/// O(s^2) compares of a few dozen slots at most, on the stack.
void scalar_equality(llvm::ArrayRef<ir::Constant> scalars, llvm::SmallVectorImpl<uint8_t>& same) {
  if (scalars.size() < 2 || scalars.size() > 255)
    return;
  bool shared = false;
  for (size_t s = 0; s < scalars.size(); ++s) {
    size_t first = s;
    for (size_t j = 0; j < s; ++j) {
      if (same[j] == j && shares_scalar_slot(scalars[j], scalars[s])) {
        first = j;
        shared = true;
        break;
      }
    }
    same.push_back(static_cast<uint8_t>(first));
  }
  if (!shared)
    same.clear();
}

/// Whether any offset of the strided iteration reaches 2^31.
bool strided_index64(const IterationSpace& space) {
  codegen::StridedArgs args;
  args.rank = space.rank;
  args.extents = space.extents;
  args.inputs.assign(space.strides.begin(), space.strides.end());
  return codegen::strided_needs_index64(args);
}

VariantKey variant_key(const AssignmentCall& call, bool on_gpu, size_t n, bool merge_scalars,
                       const IterationSpace& space) {
  VariantKey key;
  if (merge_scalars)
    scalar_equality(call.scalars, key.scalar_same);
  llvm::SmallVector<const ArrayBase*, 12> slots(call.outputs.begin(), call.outputs.end());
  slots.append(call.leaves.begin(), call.leaves.end());
  bool aligned = true;
  for (size_t s = 0; s < slots.size(); ++s) {
    // Slots alias when they are one view (one address, shape and strides):
    // two views of one buffer are two kernel parameters.
    size_t first = s;
    for (size_t j = 0; j < s; ++j) {
      if (slots[j]->address() == slots[s]->address() && slots[j]->same_view_as(*slots[s])) {
        first = j;
        break;
      }
    }
    key.alias.push_back(static_cast<uint8_t>(first));
    aligned = aligned && slots[s]->address() % 16 == 0;
  }
  if (!space.flat) {
    // The layout class: rank, and 2 bits of AxisAccess per axis per slot.
    key.layout_rank = static_cast<uint8_t>(space.rank);
    for (const codegen::AxisStrides& st : space.strides) {
      uint8_t code = 0;
      for (unsigned a = 0; a < space.rank; ++a)
        code |= static_cast<uint8_t>(codegen::access_of(st[a])) << (2 * a);
      key.layout.push_back(code);
    }
  }
  if (on_gpu)
    key.flags |= VariantKey::kOnGpu;
  if (codegen::needs_index64(n) || (!space.flat && strided_index64(space)))
    key.flags |= VariantKey::kIndex64;
  if (space.flat && aligned && vectorization_enabled())
    key.flags |= VariantKey::kVectorize;
  key.size_bucket = variant_size_bucket(n);
  return key;
}

// --- Building a variant (cold) ----------------------------------------------------

/// Checks that the IR's infer_types gives every strong operation the type
/// the C++ front end computed at compile time (docs/TYPES.md says both
/// follow codegen/dtype.hpp; this makes sure they do). Each checked node
/// becomes an extra output of its expected type; where the IR typed it
/// differently, infer_types casts it, and the cast's operand tells the type.
void check_front_end_types(const ir::Program& program,
                           llvm::ArrayRef<std::pair<ir::NodeId, DType>> expected) {
  ir::Program check = program;
  for (size_t k = 0; k < expected.size(); ++k)
    check.add_output(fmt::format("check{}", k), expected[k].second, expected[k].first);
  ir::Program typed = ir::infer_types(check);
  size_t first = program.outputs().size();
  for (size_t k = 0; k < expected.size(); ++k) {
    const ir::Node& node = typed.node(typed.outputs()[first + k].value);
    ir::Op op = program.node(expected[k].first).op;
    DType inferred = node.type;
    if (node.op == ir::Op::Cast && op != ir::Op::Cast)
      inferred = typed.node(node.args[0]).type;
    if (inferred == expected[k].second)
      continue;
    throw Error(ErrorKind::Internal,
                fmt::format("the C++ front end and the IR disagree on the type of a '{}' in `{}`: "
                            "C++ gives {}, infer_types gives {} (docs/TYPES.md)",
                            ir::op_name(op), program.label, short_name(expected[k].second),
                            short_name(inferred)));
  }
}

/// Whether an array leaf shares a buffer with an output (`x = x + 1`,
/// `assign(x, y + 1, z, x * 2)`): the kernel's pointers must then not be
/// __restrict__.
bool output_aliases_input(const VariantKey& key, size_t num_outputs) {
  for (size_t s = num_outputs; s < key.alias.size(); ++s)
    if (key.alias[s] < num_outputs)
      return true;
  return false;
}

/// The StridedLayout of a key's layout class: per program input (the leaf
/// it reads) and per output.
codegen::StridedLayout strided_layout(const VariantKey& key, llvm::ArrayRef<uint8_t> input_leaf,
                                      size_t num_outputs) {
  codegen::StridedLayout layout;
  layout.rank = key.layout_rank;
  auto decode = [&](size_t slot) {
    codegen::AxisAccesses access{};
    for (unsigned a = 0; a < layout.rank; ++a)
      access[a] = static_cast<codegen::AxisAccess>((key.layout[slot] >> (2 * a)) & 3);
    return access;
  };
  for (uint8_t leaf : input_leaf)
    layout.inputs.push_back(decode(num_outputs + leaf));
  for (size_t o = 0; o < num_outputs; ++o)
    layout.outputs.push_back(decode(o));
  return layout;
}

std::unique_ptr<CompiledExpression> build_variant(const AssignmentType& type,
                                                  const VariantKey& key,
                                                  const AssignmentCall& call) {
  ++counters().ir_builds;
  OperandLayout layout = make_layout(call);
  ir::Program program;
  program.label = make_label(type, call, layout);
  IrBuilder builder(program, layout, key.scalar_same);
  type.build(builder);
  check_front_end_types(program, builder.expectations());

  auto compiled = std::make_unique<CompiledExpression>();
  compiled->label = program.label;
  compiled->program = ir::optimize(program);
  compiled->index64 = key.flags & VariantKey::kIndex64;
  compiled->launch = tuned_launch(compiled->program, call.outputs[0]->size(),
                                  key.flags & VariantKey::kVectorize);
  compiled->options = compiled->launch.emit_options(compiled->index64);
  compiled->options.restrict_pointers = !output_aliases_input(key, call.outputs.size());

  // Parameters are matched by name: optimisation may drop an unused one.
  for (const ir::Operand& input : compiled->program.inputs()) {
    auto it = llvm::find(layout.input_names, input.name);
    if (it == layout.input_names.end())
      throw Error(ErrorKind::Internal,
                  fmt::format("optimised kernel of `{}` reads an unknown input '{}'",
                              compiled->label, input.name));
    compiled->input_leaf.push_back(layout.input_leaf[it - layout.input_names.begin()]);
  }
  if (key.layout_rank == 0) {
    compiled->cuda = codegen::emit_cuda(compiled->program, compiled->options);
  } else {
    compiled->strided = strided_layout(key, compiled->input_leaf, call.outputs.size());
    compiled->cuda =
        codegen::emit_strided_cuda(compiled->program, compiled->options, compiled->strided);
  }
  dump_kernel(compiled->cuda.name, compiled->cuda.source);
  for (const ir::ScalarParam& scalar : compiled->program.scalars()) {
    unsigned index = 0;
    if (llvm::StringRef(scalar.name).drop_front().getAsInteger(10, index) ||
        index >= call.scalars.size())
      throw Error(ErrorKind::Internal,
                  fmt::format("optimised kernel of `{}` takes an unknown scalar '{}'",
                              compiled->label, scalar.name));
    compiled->scalar_leaf.push_back(static_cast<uint8_t>(index));
    compiled->scalar_types.push_back(scalar.type);
  }
  if (compiled->program.outputs().size() != call.outputs.size())
    throw Error(ErrorKind::Internal,
                fmt::format("optimised kernel of `{}` writes {} outputs, not {}", compiled->label,
                            compiled->program.outputs().size(), call.outputs.size()));

  if (key.flags & VariantKey::kOnGpu)
    compiled->kernel =
        &rt::Runtime::get().kernels().get(
        {compiled->cuda.name, compiled->cuda.source, compiled->cuda.nvrtc_options});
  return compiled;
}

// --- Launching (hot) ---------------------------------------------------------------

bool fits(int64_t v, DType t) {
  switch (t) {
  case DType::Bool: return true; // converted with != 0
  case DType::UInt8: return v >= 0 && v <= 255;
  case DType::Int32:
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  case DType::Int64: return true;
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32:
  case DType::Float64: return true;
  }
  llvm_unreachable("unknown DType");
}

[[noreturn]] void throw_scalar_range(const AssignmentType& type, const AssignmentCall& call,
                                     const ir::Constant& value, DType to) {
  throw Error(ErrorKind::Type,
              fmt::format("the scalar {} in {} does not fit {}, the type it takes from the arrays "
                          "it is combined with (docs/TYPES.md); widen an array operand, e.g. "
                          "cast<{}>(...)",
                          format_scalar(value), describe(type, call), short_name(to),
                          to == DType::UInt8 ? "int32_t" : "int64_t"));
}

/// The strides of `compiled`'s parameters (program inputs, then outputs) in `space`.
void strided_args(const CompiledExpression& compiled, const IterationSpace& space,
                  size_t num_outputs, codegen::StridedArgs& args) {
  args.rank = space.rank;
  args.extents = space.extents;
  for (uint8_t leaf : compiled.input_leaf)
    args.inputs.push_back(space.strides[num_outputs + leaf]);
  for (size_t o = 0; o < num_outputs; ++o)
    args.outputs.push_back(space.strides[o]);
}

/// Element 0 of an array on the CPU fallback (a view's is inside its buffer).
void* host_element0(const ArrayBase& a) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(a.address()));
}

void run(const AssignmentType& type, const CompiledExpression& compiled,
         const AssignmentCall& call, size_t n, const IterationSpace& space) {
  // Each scalar goes to the kernel as its parameter's type (converted by
  // the back end with the Cast semantics); integers must fit it.
  llvm::SmallVector<ir::Constant, 8> scalars;
  for (size_t k = 0; k < compiled.scalar_leaf.size(); ++k) {
    const ir::Constant& value = call.scalars[compiled.scalar_leaf[k]];
    if (!is_floating(value.type) && !fits(value.i, compiled.scalar_types[k]))
      throw_scalar_range(type, call, value, compiled.scalar_types[k]);
    scalars.push_back(value);
  }

  if (!compiled.kernel) {
    llvm::SmallVector<const void*, 8> inputs;
    for (uint8_t leaf : compiled.input_leaf)
      inputs.push_back(host_element0(*call.leaves[leaf]));
    llvm::SmallVector<void*, 4> outputs;
    for (ArrayBase* o : call.outputs)
      outputs.push_back(host_element0(*o));
    std::optional<codegen::StridedArgs> strided;
    if (!compiled.strided.flat())
      strided_args(compiled, space, call.outputs.size(), strided.emplace());
    // Through the dispatch controller, as GPU launches are: ordered after the
    // task's work and accounted to it.
    rt::Runtime::get().scheduling().dispatch().launch_host(
        rt::sched::current_task(), [&] {
          codegen::evaluate(compiled.program, inputs, outputs, scalars, n,
                            strided ? &*strided : nullptr);
        });
    ++counters().cpu_runs;
    return;
  }

  // cuLaunchKernel reads each parameter through a pointer: every value gets
  // an 8-byte slot (pointers, scalars, n) and args points at the slots.
  llvm::SmallVector<uint64_t, 16> slots;
  for (uint8_t leaf : compiled.input_leaf)
    slots.push_back(call.leaves[leaf]->address());
  for (ArrayBase* o : call.outputs)
    slots.push_back(o->address());
  for (size_t k = 0; k < scalars.size(); ++k) {
    uint64_t bits = 0;
    codegen::write_scalar_argument(scalars[k], compiled.scalar_types[k], &bits);
    slots.push_back(bits);
  }
  // n is `unsigned` (n < 2^31 here) or `unsigned long long` (index64).
  slots.push_back(static_cast<uint64_t>(n));
  if (!compiled.strided.flat()) {
    // codegen/strided_layout.hpp's ABI: extents of axes 1.., then every
    // Strided axis's stride, inputs then outputs. `int` parameters read the
    // low 4 bytes of a slot, which hold the value (little-endian).
    for (unsigned a = 1; a < space.rank; ++a)
      slots.push_back(static_cast<uint64_t>(space.extents[a]));
    auto strides = [&](const codegen::AxisStrides& st, const codegen::AxisAccesses& access) {
      for (unsigned a = 0; a < space.rank; ++a)
        if (access[a] == codegen::AxisAccess::Strided)
          slots.push_back(static_cast<uint64_t>(st[a]));
    };
    for (size_t k = 0; k < compiled.input_leaf.size(); ++k)
      strides(space.strides[call.outputs.size() + compiled.input_leaf[k]], compiled.strided.inputs[k]);
    for (size_t o = 0; o < call.outputs.size(); ++o)
      strides(space.strides[o], compiled.strided.outputs[o]);
  }
  llvm::SmallVector<void*, 16> args;
  for (uint64_t& slot : slots)
    args.push_back(&slot);

  rt::Runtime& runtime = rt::Runtime::get();
  const codegen::KernelShape& shape = compiled.options.shape;
  unsigned grid = compiled.launch.grid(n, compiled.cuda.pack_width);
  runtime.launch(*compiled.kernel, {grid, shape.block_size, 0}, args.data());
  ++counters().gpu_launches;
}

} // namespace

KernelVariants::KernelVariants(const AssignmentType& type) : Type(type) {}
KernelVariants::~KernelVariants() = default;

const CompiledExpression& KernelVariants::get(const VariantKey& key, const AssignmentCall& call) {
  std::lock_guard<std::mutex> guard(Lock);
  for (const auto& [k, compiled] : Variants)
    if (k == key)
      return *compiled;
  Variants.emplace_back(key, build_variant(Type, key, call));
  if (!key.scalar_same.empty())
    ScalarPatterns.fetch_add(1, std::memory_order_relaxed);
  return *Variants.back().second;
}

void execute(KernelVariants& variants, const AssignmentCall& call) {
  const AssignmentType& type = variants.type();
  // Resident from here until the launch is enqueued (or the CPU evaluator
  // returns): every address below is read after all operands are pinned.
  OperandPins pins;
  pins.add(call.outputs);
  pins.add(call.leaves);
  check_operands(type, call);
  size_t n = static_cast<size_t>(call.outputs[0]->size());
  if (n == 0)
    return;
  rt::Runtime& runtime = rt::Runtime::get();
  IterationSpace space;
  plan_iteration(call.outputs, call.leaves, space);
  VariantKey key = variant_key(call, runtime.on_gpu(), n, variants.merges_scalars(), space);
  run(type, variants.get(key, call), call, n, space);
}

KernelInfo inspect(KernelVariants& variants, const AssignmentCall& call) {
  OperandPins pins; // aliasing is decided from addresses
  pins.add(call.outputs);
  pins.add(call.leaves);
  check_operands(variants.type(), call);
  size_t n = static_cast<size_t>(call.outputs[0]->size());
  IterationSpace space;
  plan_iteration(call.outputs, call.leaves, space);
  VariantKey key =
      variant_key(call, rt::Runtime::get().on_gpu(), n, variants.merges_scalars(), space);
  const CompiledExpression& compiled = variants.get(key, call);
  return {compiled.cuda.name, compiled.label, ir::print(compiled.program),
          compiled.cuda.source, compiled.cuda.pack_width};
}

void throw_no_shape(const AssignmentType& type, llvm::ArrayRef<ir::Constant> scalars) {
  ExprPrinter printer({}, scalars);
  type.print(printer, 0);
  throw Error(ErrorKind::Shape,
              fmt::format("cannot make an Array from `{}`: it has no array operand to take a shape "
                          "from; use Array<T>::full(shape, value)",
                          printer.take()));
}


} // namespace detail
} // namespace gpukit
