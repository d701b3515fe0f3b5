#include "dsl/expression_kernel.hpp"

#include "codegen/cpu_evaluator.hpp"
#include "codegen/cuda_emitter.hpp"
#include "codegen/ir_printer.hpp"
#include "codegen/kernel_abi.hpp"
#include "codegen/passes/pipeline.hpp"
#include "codegen/passes/type_infer.hpp"
#include "dsl/array_base.hpp"
#include "dsl/kernel_dump.hpp"
#include "dsl/tuned_launch.hpp"
#include "dsl/operand_layout.hpp"
#include "runtime/runtime.hpp"
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

void check_operands(const AssignmentType& type, const AssignmentCall& call) {
  const Shape& shape = call.outputs[0]->shape();
  for (size_t o = 1; o < call.outputs.size(); ++o)
    if (!(call.outputs[o]->shape() == shape))
      throw_shape_mismatch(type, call, o, std::nullopt);
  for (size_t k = 0; k < call.leaves.size(); ++k)
    if (!(call.leaves[k]->shape() == shape))
      throw_shape_mismatch(type, call, 0, k);
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

VariantKey variant_key(const AssignmentCall& call, bool on_gpu, size_t n) {
  VariantKey key;
  llvm::SmallVector<uint64_t, 12> addresses;
  for (const ArrayBase* o : call.outputs)
    addresses.push_back(o->address());
  for (const ArrayBase* l : call.leaves)
    addresses.push_back(l->address());
  bool aligned = true;
  for (size_t s = 0; s < addresses.size(); ++s) {
    size_t first = s;
    for (size_t j = 0; j < s; ++j) {
      if (addresses[j] == addresses[s]) {
        first = j;
        break;
      }
    }
    key.alias.push_back(static_cast<uint8_t>(first));
    aligned = aligned && addresses[s] % 16 == 0;
  }
  if (on_gpu)
    key.flags |= VariantKey::kOnGpu;
  if (codegen::needs_index64(n))
    key.flags |= VariantKey::kIndex64;
  if (aligned && vectorization_enabled())
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

std::unique_ptr<CompiledExpression> build_variant(const AssignmentType& type,
                                                  const VariantKey& key,
                                                  const AssignmentCall& call) {
  ++counters().ir_builds;
  OperandLayout layout = make_layout(call);
  ir::Program program;
  program.label = make_label(type, call, layout);
  IrBuilder builder(program, layout);
  type.build(builder);
  check_front_end_types(program, builder.expectations());

  auto compiled = std::make_unique<CompiledExpression>();
  compiled->label = program.label;
  compiled->program = ir::optimize(program);
  compiled->index64 = key.flags & VariantKey::kIndex64;
  compiled->launch = tuned_launch(compiled->program, call.outputs[0]->size(),
                                  key.flags & VariantKey::kVectorize);
  compiled->options = compiled->launch.emit_options(compiled->index64);
  compiled->cuda = codegen::emit_cuda(compiled->program, compiled->options);
  dump_kernel(compiled->cuda.name, compiled->cuda.source);

  // Parameters are matched by name: optimisation may drop an unused one.
  for (const ir::Operand& input : compiled->program.inputs()) {
    auto it = llvm::find(layout.input_names, input.name);
    if (it == layout.input_names.end())
      throw Error(ErrorKind::Internal,
                  fmt::format("optimised kernel of `{}` reads an unknown input '{}'",
                              compiled->label, input.name));
    compiled->input_leaf.push_back(layout.input_leaf[it - layout.input_names.begin()]);
  }
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

void run(const AssignmentType& type, const CompiledExpression& compiled,
         const AssignmentCall& call, size_t n) {
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
      inputs.push_back(call.leaves[leaf]->allocation().host_ptr());
    llvm::SmallVector<void*, 4> outputs;
    for (ArrayBase* o : call.outputs)
      outputs.push_back(o->allocation().host_ptr());
    codegen::evaluate(compiled.program, inputs, outputs, scalars, n);
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
  return *Variants.back().second;
}

void execute(KernelVariants& variants, const AssignmentCall& call) {
  const AssignmentType& type = variants.type();
  check_operands(type, call);
  size_t n = static_cast<size_t>(call.outputs[0]->size());
  if (n == 0)
    return;
  rt::Runtime& runtime = rt::Runtime::get();
  VariantKey key = variant_key(call, runtime.on_gpu(), n);
  run(type, variants.get(key, call), call, n);
}

KernelInfo inspect(KernelVariants& variants, const AssignmentCall& call) {
  check_operands(variants.type(), call);
  size_t n = static_cast<size_t>(call.outputs[0]->size());
  VariantKey key = variant_key(call, rt::Runtime::get().on_gpu(), n);
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
