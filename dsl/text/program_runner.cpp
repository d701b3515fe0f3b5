#include "dsl/text/program_runner.hpp"

#include "codegen/cpu_evaluator.hpp"
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

} // namespace

CompiledProgram compile_program(const LoweredProgram& lowered, const CompileOptions& options) {
  CompiledProgram cp;
  cp.optimized = ir::optimize(lowered.program);
  cp.launch = tuned_launch(cp.optimized, options.n, options.vectorize);
  cp.options = cp.launch.emit_options(options.index64);
  cp.cuda = codegen::emit_cuda(cp.optimized, cp.options);
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
  rt::Runtime& runtime = rt::Runtime::get();
  OnGpu = runtime.on_gpu();
  if (OnGpu)
    Kernel = &runtime.kernels().get({compiled.cuda.name, compiled.cuda.source, compiled.cuda.nvrtc_options});
  for (const ArrayInfo& in : lowered.inputs)
    Inputs.push_back(runtime.allocator().allocate(std::max<size_t>(1, N * size_of(in.dtype))));
  for (const ArrayInfo& out : lowered.outputs)
    Outputs.push_back(runtime.allocator().allocate(std::max<size_t>(1, N * size_of(out.dtype))));
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
    if (inputs[k].elements() != N || inputs[k].dtype != Lowered.inputs[k].dtype)
      throw Error(ErrorKind::Internal, fmt::format("input '{}' has the wrong size or type",
                                                   Lowered.inputs[k].name));
    runtime.copy_to_device(Inputs[k], inputs[k].data.data(), inputs[k].data.size());
  }
}

void ProgramRunner::launch() {
  if (N == 0)
    return;
  if (!OnGpu) {
    llvm::SmallVector<const void*, 8> in;
    for (size_t index : Compiled.input_index)
      in.push_back(Inputs[index].host_ptr());
    llvm::SmallVector<void*, 4> out;
    for (rt::Allocation a : Outputs)
      out.push_back(a.host_ptr());
    // Through the dispatch controller, as GPU launches are: ordered after the
    // task's work and accounted to it.
    rt::Runtime::get().scheduling().dispatch().launch_host(rt::sched::current_task(), [&] {
      codegen::evaluate(Compiled.optimized, in, out, Scalars, N);
    });
    return;
  }
  // cuLaunchKernel reads each parameter through a pointer: one zeroed 8-byte
  // slot per value (pointers, scalars, n; little-endian, so a narrower
  // parameter reads its low bytes).
  llvm::SmallVector<uint64_t, 16> slots;
  for (size_t index : Compiled.input_index)
    slots.push_back(Inputs[index].address);
  for (rt::Allocation a : Outputs)
    slots.push_back(a.address);
  for (size_t k = 0; k < Scalars.size(); ++k) {
    uint64_t bits = 0;
    codegen::write_scalar_argument(Scalars[k], Compiled.optimized.scalars()[k].type, &bits);
    slots.push_back(bits);
  }
  slots.push_back(static_cast<uint64_t>(N));
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
  for (size_t k = 0; k < Outputs.size(); ++k) {
    const ArrayInfo& info = Lowered.outputs[k];
    std::vector<int64_t> shape = info.extents;
    HostArray a = HostArray::zeros(info.dtype, shape);
    if (a.elements() != N)
      throw Error(ErrorKind::Internal, fmt::format("output '{}' is not {} elements", info.name, N));
    runtime.copy_to_host(a.data.data(), Outputs[k], a.data.size());
    outputs.push_back(std::move(a));
  }
}

size_t ProgramRunner::bytes_per_launch() const {
  size_t bytes = 0;
  for (size_t index : Compiled.input_index)
    bytes += N * size_of(Lowered.inputs[index].dtype);
  for (const ArrayInfo& out : Lowered.outputs)
    bytes += N * size_of(out.dtype);
  return bytes;
}

} // namespace gpukit::text
