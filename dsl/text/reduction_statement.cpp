#include "dsl/text/reduction_statement.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::text {

namespace {

/// `info`'s bound shape; an unbound size counts as `unbound` and is named in `assumed`.
Shape bound_shape(const ArrayInfo& info, int64_t unbound, std::vector<std::string>& assumed) {
  std::vector<int64_t> extents;
  for (size_t k = 0; k < info.dims.size(); ++k) {
    int64_t e = info.extents.size() > k ? info.extents[k] : -1;
    if (e < 0) {
      e = info.dims[k].symbol.empty() ? info.dims[k].extent : unbound;
      if (!info.dims[k].symbol.empty() &&
          std::find(assumed.begin(), assumed.end(), info.dims[k].symbol) == assumed.end())
        assumed.push_back(info.dims[k].symbol);
    }
    extents.push_back(e);
  }
  return Shape::of(extents);
}

} // namespace

CompiledStatement compile_statement(const LoweredProgram& lowered, size_t index,
                                    const StatementCompileOptions& options) {
  const LoweredReduction& r = lowered.reductions.at(index);
  CompiledStatement c;
  c.index = index;
  std::vector<std::string> assumed;
  Shape main = bound_shape(r.main, options.unbound_extent, assumed);
  c.shape = detail::reduction_shape(main, r.axis, r.what);
  // Only a Row plan is compiled for a size (its row length); say so when
  // that size was assumed.
  if (c.shape.kind == codegen::ReductionKind::Row && r.main.extents.back() < 0)
    c.assumed_sizes.push_back(r.main.dims.back().symbol);
  std::vector<detail::NamedShape> operands;
  for (const auto& [name, input] : r.inputs)
    operands.push_back({name, bound_shape(lowered.inputs[input], options.unbound_extent, assumed)});
  c.output = bound_shape(lowered.outputs[r.output], options.unbound_extent, assumed);
  c.operands = detail::classify_operands(r.plan, c.shape, operands, c.output, r.what);
  // Allocations are 256-byte aligned (rt::kAllocationAlignment): packed loads.
  c.compiled = detail::compile_reduction(r.plan, c.shape, c.operands, /*aligned=*/true, options.on_gpu);
  return c;
}

std::string describe_statement(const CompiledStatement& c) {
  std::string out = detail::describe_plan(*c.compiled, c.shape);
  for (const codegen::ReductionKernel& k : c.compiled->kernels.kernels)
    out += "\n" + k.cuda.source;
  return out;
}

void run_statement(const CompiledStatement& c, const LoweredProgram& lowered,
                   llvm::function_ref<uint64_t(size_t input)> input, uint64_t output) {
  const LoweredReduction& r = lowered.reductions.at(c.index);
  auto input_address = [&](const std::string& name) -> uint64_t {
    for (const auto& [n, k] : r.inputs)
      if (n == name)
        return input(k);
    throw Error(ErrorKind::Internal, fmt::format("{}: the plan reads an unknown input '{}'", r.what, name));
  };
  auto scalar = [&](const std::string& name) -> ir::Constant {
    for (const LoweredReduction::Scalar& s : r.scalars) {
      if (s.name != name)
        continue;
      if (!s.value)
        throw Error(ErrorKind::Usage,
                    fmt::format("scalar '{0}' has no value; give --scalar {0}=VALUE or declare it with one",
                                s.source));
      return *s.value;
    }
    throw Error(ErrorKind::Internal, fmt::format("{}: the plan takes an unknown scalar '{}'", r.what, name));
  };
  detail::run_reduction(*c.compiled, c.shape, input_address, scalar, output, r.what);
}

size_t statement_bytes(const LoweredProgram& lowered, size_t index) {
  const LoweredReduction& r = lowered.reductions.at(index);
  size_t bytes = 0;
  for (const auto& [name, input] : r.inputs)
    bytes += static_cast<size_t>(lowered.inputs[input].elements()) * size_of(lowered.inputs[input].dtype);
  const ArrayInfo& out = lowered.outputs[r.output];
  return bytes + static_cast<size_t>(out.elements()) * size_of(out.dtype);
}

} // namespace gpukit::text
