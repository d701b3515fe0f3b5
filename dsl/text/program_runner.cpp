#include "dsl/text/program_runner.hpp"

#include "codegen/cpu_evaluator.hpp"
#include "codegen/cuda_strided_emitter.hpp"
#include "codegen/kernel_abi.hpp"
#include "codegen/passes/pipeline.hpp"
#include "dsl/expr_printer.hpp"
#include "dsl/text/literal.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/scheduling.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <cstring>
#include <limits>

namespace gpukit::text {

namespace {

bool fits(const ir::Constant& v, DType to) {
  if (is_floating(v.type))
    return true;
  switch (to) {
  case DType::UInt8: return v.i >= 0 && v.i <= 255;
  case DType::Int32:
    return v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max();
  case DType::Bool:
  case DType::Int64:
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32:
  case DType::Float64: return true;
  }
  return true;
}

/// `v` as a constant of `to`, as the C++ DSL converts a scalar argument.
ir::Constant convert(const ir::Constant& v, DType to) {
  bool from_float = is_floating(v.type);
  if (is_floating(to))
    return float_constant(to, from_float ? v.f : static_cast<double>(v.i));
  if (to == DType::Bool)
    return ir::Constant::of_int(to, from_float ? v.f != 0.0 : v.i != 0);
  int64_t i = from_float ? float_constant(DType::Float64, v.f).i : v.i;
  if (to == DType::UInt8)
    return ir::Constant::of_int(to, static_cast<uint8_t>(i));
  if (to == DType::Int32)
    return ir::Constant::of_int(to, static_cast<int32_t>(i));
  return ir::Constant::of_int(to, i);
}

/// The strided description of a program whose inputs broadcast to the
/// outputs' shape; nullopt when every operand has the outputs' shape.
std::optional<codegen::StridedArgs> broadcast_args(const LoweredProgram& lowered,
                                                   llvm::ArrayRef<size_t> input_index) {
  if (lowered.elementwise_outputs.empty())
    return std::nullopt;
  const ArrayInfo& out = lowered.outputs[lowered.elementwise_outputs.front()];
  auto extent = [](const ArrayInfo& a, size_t k) -> int64_t {
    if (a.extents[k] >= 0)
      return a.extents[k];
    return a.dims[k].symbol.empty() ? a.dims[k].extent : 2;
  };
  bool differs = false;
  for (size_t index : input_index) {
    const ArrayInfo& in = lowered.inputs[index];
    differs |= in.dims.size() != out.dims.size();
    for (size_t k = 0; !differs && k < in.dims.size(); ++k)
      differs |= extent(in, k) != extent(out, k);
  }
  if (!differs)
    return std::nullopt;
  unsigned rank = static_cast<unsigned>(out.dims.size());
  if (rank > codegen::kMaxStridedRank)
    throw Error(ErrorKind::Shape, fmt::format("broadcasting to {} needs at most {} dimensions",
                                              out.describe(), codegen::kMaxStridedRank));
  codegen::StridedArgs args;
  args.rank = rank;
  for (unsigned k = 0; k < rank; ++k)
    args.extents[k] = extent(out, k);
  auto row_major = [&](const ArrayInfo& a) {
    codegen::AxisStrides strides{};
    unsigned lead = rank - static_cast<unsigned>(a.dims.size());
    int64_t step = 1;
    for (unsigned k = rank; k-- > lead;) {
      int64_t e = extent(a, k - lead);
      strides[k] = e == 1 && args.extents[k] != 1 ? 0 : step;
      step *= e;
    }
    return strides; // leading axes the operand lacks stay 0: broadcast
  };
  for (size_t index : input_index)
    args.inputs.push_back(row_major(lowered.inputs[index]));
  for (size_t o : lowered.elementwise_outputs)
    args.outputs.push_back(row_major(lowered.outputs[o]));
  return args;
}

} // namespace

CompiledProgram compile_program(const LoweredProgram& lowered, const CompileOptions& options) {
  CompiledProgram cp;
  for (size_t k = 0; k < lowered.reductions.size(); ++k)
    cp.reductions.push_back(compile_statement(lowered, k, {.on_gpu = false, .unbound_extent = options.unbound_extent}));
  if (lowered.program.outputs().empty())
    return cp;
  cp.has_elementwise = true;
  cp.optimized = ir::optimize(lowered.program);
  cp.launch = tuned_launch(cp.optimized, options.n, options.vectorize);
  cp.options = cp.launch.emit_options(options.index64);
  // The passes may drop a parameter nothing reads: match the rest by name.
  for (const ir::Operand& in : cp.optimized.inputs()) {
    auto it = llvm::find_if(lowered.program.inputs(),
                            [&](const ir::Operand& o) { return o.name == in.name; });
    if (it == lowered.program.inputs().end())
      throw Error(ErrorKind::Internal, fmt::format("optimised program reads unknown input '{}'", in.name));
    cp.input_index.push_back(static_cast<size_t>(it - lowered.program.inputs().begin()));
  }
  for (const ir::ScalarParam& s : cp.optimized.scalars()) {
    auto it = llvm::find_if(lowered.program.scalars(),
                            [&](const ir::ScalarParam& p) { return p.name == s.name; });
    if (it == lowered.program.scalars().end())
      throw Error(ErrorKind::Internal, fmt::format("optimised program takes unknown scalar '{}'", s.name));
    cp.scalar_index.push_back(static_cast<size_t>(it - lowered.program.scalars().begin()));
  }
  cp.strided = broadcast_args(lowered, cp.input_index);
  cp.cuda = cp.strided ? codegen::emit_strided_cuda(cp.optimized, cp.options, codegen::classify(*cp.strided))
                       : codegen::emit_cuda(cp.optimized, cp.options);
  return cp;
}

ProgramRunner::ProgramRunner(const CompiledProgram& compiled, const LoweredProgram& lowered, size_t n)
    : Compiled(compiled), Lowered(lowered), N(n) {
  for (size_t k = 0; k < compiled.scalar_index.size(); ++k) {
    size_t source = compiled.scalar_index[k];
    const std::optional<ir::Constant>& value = lowered.scalar_values[source];
    const ir::ScalarParam& param = compiled.optimized.scalars()[k];
    if (!value)
      throw Error(ErrorKind::Usage,
                  fmt::format("scalar '{0}' has no value; give --scalar {0}=VALUE or declare it "
                              "with one",
                              lowered.program.scalars()[source].name));
    if (!fits(*value, param.type))
      throw Error(ErrorKind::Type,
                  fmt::format("the literal {} in `{}` does not fit {}, the type it takes from the "
                              "arrays it is combined with; make an operand wider, e.g. i64(...)",
                              detail::format_scalar(*value), lowered.program.label,
                              short_name(param.type)));
    Scalars.push_back(convert(*value, param.type));
  }
  for (const LoweredReduction& r : lowered.reductions)
    for (const LoweredReduction::Scalar& s : r.scalars)
      if (!s.value)
        throw Error(ErrorKind::Usage,
                    fmt::format("scalar '{0}' has no value; give --scalar {0}=VALUE or declare it "
                                "with one",
                                s.source));
  rt::Runtime& runtime = rt::Runtime::get();
  OnGpu = runtime.on_gpu();
  if (OnGpu && compiled.has_elementwise)
    Kernel = &runtime.kernels().get({compiled.cuda.name, compiled.cuda.source, compiled.cuda.nvrtc_options});
  if (OnGpu)
    for (size_t k = 0; k < lowered.reductions.size(); ++k)
      Loaded.push_back(compile_statement(lowered, k, {.on_gpu = true}));
  for (const ArrayInfo& in : lowered.inputs)
    Inputs.push_back(runtime.allocator().allocate(
        std::max<size_t>(1, static_cast<size_t>(in.elements()) * size_of(in.dtype))));
  std::vector<bool> elementwise(lowered.outputs.size(), false);
  for (size_t k : lowered.elementwise_outputs)
    elementwise[k] = true;
  for (size_t k = 0; k < lowered.outputs.size(); ++k) {
    size_t elements = elementwise[k] ? N : static_cast<size_t>(lowered.outputs[k].elements());
    Outputs.push_back(runtime.allocator().allocate(std::max<size_t>(1, elements * size_of(lowered.outputs[k].dtype))));
  }
}

ProgramRunner::~ProgramRunner() {
  rt::Runtime& runtime = rt::Runtime::get();
  for (rt::Allocation a : Inputs)
    runtime.allocator().deallocate(a);
  for (rt::Allocation a : Outputs)
    runtime.allocator().deallocate(a);
}

void ProgramRunner::upload(llvm::ArrayRef<HostArray> inputs) {
  rt::Runtime& runtime = rt::Runtime::get();
  for (size_t k = 0; k < Inputs.size(); ++k) {
    if (inputs[k].elements() != static_cast<size_t>(Lowered.inputs[k].elements()) ||
        inputs[k].dtype != Lowered.inputs[k].dtype)
      throw Error(ErrorKind::Internal, fmt::format("input '{}' has the wrong size or type",
                                                   Lowered.inputs[k].name));
    runtime.copy_to_device(Inputs[k], inputs[k].data.data(), inputs[k].data.size());
  }
}

void ProgramRunner::poison_outputs() {
  rt::Runtime& runtime = rt::Runtime::get();
  for (rt::Allocation a : Outputs) {
    std::vector<std::byte> ones(a.bytes, std::byte{0xFF});
    runtime.copy_to_device(a, ones.data(), ones.size());
  }
}

void ProgramRunner::launch() {
  if (Compiled.has_elementwise)
    launch_elementwise();
  const std::vector<CompiledStatement>& statements = OnGpu ? Loaded : Compiled.reductions;
  for (const CompiledStatement& c : statements) {
    const LoweredReduction& r = Lowered.reductions[c.index];
    run_statement(c, Lowered, [&](size_t input) { return Inputs[input].address; }, Outputs[r.output].address);
  }
}

void ProgramRunner::launch_elementwise() {
  if (N == 0)
    return;
  if (!OnGpu) {
    llvm::SmallVector<const void*, 8> in;
    for (size_t index : Compiled.input_index)
      in.push_back(Inputs[index].host_ptr());
    llvm::SmallVector<void*, 4> out;
    for (size_t k : Lowered.elementwise_outputs)
      out.push_back(Outputs[k].host_ptr());
    // Through the dispatch controller, as GPU launches are: ordered after the
    // task's work and accounted to it.
    rt::Runtime::get().scheduling().dispatch().launch_host(rt::sched::current_task(), [&] {
      codegen::evaluate(Compiled.optimized, in, out, Scalars, N,
                        Compiled.strided ? &*Compiled.strided : nullptr);
    });
    return;
  }
  // cuLaunchKernel reads each parameter through a pointer: one zeroed 8-byte
  // slot per value (pointers, scalars, n; little-endian, so a narrower
  // parameter reads its low bytes).
  llvm::SmallVector<uint64_t, 16> slots;
  for (size_t index : Compiled.input_index)
    slots.push_back(Inputs[index].address);
  for (size_t k : Lowered.elementwise_outputs)
    slots.push_back(Outputs[k].address);
  for (size_t k = 0; k < Scalars.size(); ++k) {
    uint64_t bits = 0;
    codegen::write_scalar_argument(Scalars[k], Compiled.optimized.scalars()[k].type, &bits);
    slots.push_back(bits);
  }
  slots.push_back(static_cast<uint64_t>(N));
  if (const std::optional<codegen::StridedArgs>& st = Compiled.strided) {
    // strided_layout.hpp's ABI: extents of axes 1.., then every Strided
    // axis's stride, inputs first (int or long long: little-endian slots).
    auto push = [&](int64_t v) {
      slots.push_back(Compiled.options.index64 ? static_cast<uint64_t>(v)
                                               : static_cast<uint64_t>(static_cast<uint32_t>(v)));
    };
    for (unsigned a = 1; a < st->rank; ++a)
      push(st->extents[a]);
    for (const codegen::AxisStrides& s : st->inputs)
      for (unsigned a = 0; a < st->rank; ++a)
        if (codegen::access_of(s[a]) == codegen::AxisAccess::Strided)
          push(s[a]);
    for (const codegen::AxisStrides& s : st->outputs)
      for (unsigned a = 0; a < st->rank; ++a)
        if (codegen::access_of(s[a]) == codegen::AxisAccess::Strided)
          push(s[a]);
  }
  llvm::SmallVector<void*, 16> args;
  for (uint64_t& slot : slots)
    args.push_back(&slot);
  rt::Runtime& runtime = rt::Runtime::get();
  const codegen::KernelShape& shape = Compiled.options.shape;
  unsigned grid = Compiled.launch.grid(N, Compiled.cuda.pack_width);
  runtime.launch(*Kernel, {grid, shape.block_size, 0}, args.data());
}

void ProgramRunner::download(std::vector<HostArray>& outputs) {
  rt::Runtime& runtime = rt::Runtime::get();
  runtime.synchronize();
  outputs.clear();
  std::vector<bool> elementwise(Outputs.size(), false);
  for (size_t k : Lowered.elementwise_outputs)
    elementwise[k] = true;
  for (size_t k = 0; k < Outputs.size(); ++k) {
    const ArrayInfo& info = Lowered.outputs[k];
    std::vector<int64_t> shape = info.extents;
    HostArray a = HostArray::zeros(info.dtype, shape);
    if (elementwise[k] && a.elements() != N)
      throw Error(ErrorKind::Internal, fmt::format("output '{}' is not {} elements", info.name, N));
    runtime.copy_to_host(a.data.data(), Outputs[k], a.data.size());
    outputs.push_back(std::move(a));
  }
}

size_t ProgramRunner::bytes_per_launch() const {
  size_t bytes = 0;
  for (size_t index : Compiled.input_index)
    bytes += static_cast<size_t>(Lowered.inputs[index].elements()) * size_of(Lowered.inputs[index].dtype);
  for (size_t k : Lowered.elementwise_outputs)
    bytes += N * size_of(Lowered.outputs[k].dtype);
  for (size_t k = 0; k < Lowered.reductions.size(); ++k)
    bytes += statement_bytes(Lowered, k);
  return bytes;
}

} // namespace gpukit::text
