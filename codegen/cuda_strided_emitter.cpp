#include "codegen/cuda_strided_emitter.hpp"

#include "codegen/cuda_expression.hpp"
#include "codegen/ir_printer.hpp"
#include "codegen/passes/type_infer.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>

namespace gpukit::codegen {

namespace {

class StridedEmitter {
public:
  StridedEmitter(const ir::Program& p, const EmitOptions& o, const StridedLayout& l)
      : P(p), Opt(o), L(l), Names(p), Element(p, Names, Helpers),
        Count(o.index64 ? "unsigned long long" : "unsigned"),
        Offset(o.index64 ? "long long" : "int"), Widen(o.index64 ? "(unsigned long long)" : "") {}

  CudaKernel emit(const std::string& name);

private:
  /// The offset of operand `name` with `access` at the current indices:
  /// "gk_i0 * gk_x_s0 + gk_i1", or "0" for an operand broadcast on every axis.
  std::string offset(const std::string& name, const AxisAccesses& access) const {
    std::string sum;
    for (unsigned a = 0; a < L.rank; ++a) {
      std::string term;
      switch (access[a]) {
      case AxisAccess::Broadcast: continue;
      case AxisAccess::Unit: term = fmt::format("gk_i{}", a); break;
      case AxisAccess::Strided: term = fmt::format("gk_i{} * {}", a, stride_name(name, a)); break;
      }
      sum += (sum.empty() ? "" : " + ") + term;
    }
    return sum.empty() ? "0" : sum;
  }
  static std::string stride_name(const std::string& name, unsigned axis) {
    return fmt::format("gk_{}_s{}", name, axis);
  }
  std::string load(size_t k) const { return fmt::format("{}[{}]", Names.input(k), offset(Names.input(k), L.inputs[k])); }
  std::string store(size_t k) const {
    return fmt::format("{}[{}]", Names.output(k), offset(Names.output(k), L.outputs[k]));
  }
  /// Splits `value` (a loop-count expression) into per-axis digits `prefix`0..rank-1.
  void split(SourceWriter& w, const std::string& value, const std::string& prefix, bool mutable_digits);
  std::string signature(const std::string& name) const;

  const ir::Program& P;
  EmitOptions Opt;
  const StridedLayout& L;
  CudaHelpers Helpers;
  CudaNames Names;
  ElementCodegen Element;
  std::string Count, Offset, Widen;
};

void StridedEmitter::split(SourceWriter& w, const std::string& value, const std::string& prefix,
                           bool mutable_digits) {
  std::string cst = mutable_digits ? "" : "const ";
  if (L.rank == 1) {
    w.line("{}{} {}0 = {};", cst, Offset, prefix, value);
    return;
  }
  std::string rest = fmt::format("gk_{}q", prefix.substr(3));
  w.line("{} {} = {};", Count, rest, value);
  for (unsigned a = L.rank; a-- > 1;) {
    w.line("{}{} {}{} = {} % gk_e{};", cst, Offset, prefix, a, rest, a);
    w.line("{} /= gk_e{};", rest, a);
  }
  w.line("{}{} {}0 = {};", cst, Offset, prefix, rest);
}

std::string StridedEmitter::signature(const std::string& name) const {
  std::string restrict = Opt.restrict_pointers ? " __restrict__" : "";
  std::vector<std::string> inputs, rest, shape;
  for (size_t k = 0; k < P.inputs().size(); ++k)
    inputs.push_back(fmt::format("const {}*{} {}", cuda_storage_type(P.inputs()[k].type), restrict, Names.input(k)));
  for (size_t k = 0; k < P.outputs().size(); ++k)
    rest.push_back(fmt::format("{}*{} {}", cuda_storage_type(P.outputs()[k].type), restrict, Names.output(k)));
  for (size_t k = 0; k < P.scalars().size(); ++k)
    rest.push_back(fmt::format("{} {}", cuda_compute_type(P.scalars()[k].type), Names.scalar(k)));
  rest.push_back(fmt::format("{} n", Count));
  for (unsigned a = 1; a < L.rank; ++a)
    shape.push_back(fmt::format("{} gk_e{}", Offset, a));
  auto strides = [&](const std::string& operand, const AxisAccesses& access) {
    for (unsigned a = 0; a < L.rank; ++a)
      if (access[a] == AxisAccess::Strided)
        shape.push_back(fmt::format("{} {}", Offset, stride_name(operand, a)));
  };
  for (size_t k = 0; k < P.inputs().size(); ++k)
    strides(Names.input(k), L.inputs[k]);
  for (size_t k = 0; k < P.outputs().size(); ++k)
    strides(Names.output(k), L.outputs[k]);

  std::string head = name + "(";
  std::string indent(head.size(), ' ');
  std::string out = head;
  bool first_line = true;
  for (const auto* group : {&inputs, &rest, &shape}) {
    if (group->empty())
      continue;
    out += fmt::format("{}{}", first_line ? "" : ",\n" + indent, fmt::join(*group, ", "));
    first_line = false;
  }
  return out + ") {";
}

CudaKernel StridedEmitter::emit(const std::string& name) {
  SourceWriter w;
  w.line("extern \"C\" __global__ void __launch_bounds__({})", Opt.shape.block_size);
  std::string sig = signature(name);
  size_t last_line = sig.rfind('\n');
  if (last_line != std::string::npos)
    w.lines(std::string_view(sig).substr(0, last_line));
  w.open(std::string_view(sig).substr(last_line == std::string::npos ? 0 : last_line + 1));
  if (L.rank == 1) {
    // gk_i0 equals i, but signed: i * a negative stride must not wrap.
    w.line("// Output element i is at index gk_i0 (i as a signed offset, so that negative");
    w.line("// strides work); each operand adds gk_i0 times its stride.");
  } else {
    w.line("// Output element i is at indices gk_i0..gk_i{} (row-major; axis a > 0", L.rank - 1);
    w.line("// has extent gk_ea). The first index and the grid stride are split into");
    w.line("// per-axis digits once, so the loop never divides.");
  }
  w.line("const {} gk_start = {}blockIdx.x * blockDim.x + threadIdx.x;", Count, Widen);
  w.line("const {} gk_step = {}gridDim.x * blockDim.x;", Count, Widen);
  split(w, "gk_start", "gk_i", true);
  split(w, "gk_step", "gk_d", false);
  w.open("for ({} i = gk_start; i < n; i += gk_step) {{", Count);
  if (P.outputs().size() < 2) {
    Element.emit(w, [&](size_t k) { return load(k); }, [&](size_t k) { return store(k); });
  } else {
    // An output may be an input: load every input before the first store.
    for (size_t k = 0; k < P.inputs().size(); ++k)
      if (Element.input_used(k))
        w.line("const {} {}_v = {};", cuda_storage_type(P.inputs()[k].type), Names.input(k), load(k));
    Element.emit(w, [&](size_t k) { return Names.input(k) + "_v"; }, [&](size_t k) { return store(k); });
  }
  // Add the step digit by digit: each digit stays below its extent after
  // one conditional subtraction, because digit + step digit + carry < 2 * extent.
  if (L.rank > 1)
    w.line("// Advance by gk_step: add its digits, carrying into the axis before.");
  for (unsigned a = L.rank; a-- > 1;) {
    w.line("gk_i{0} += gk_d{0};", a);
    w.open("if (gk_i{0} >= gk_e{0}) {{", a);
    w.line("gk_i{0} -= gk_e{0};", a);
    w.line("++gk_i{};", a - 1);
    w.close();
  }
  w.line("gk_i0 += gk_d0;");
  w.close();
  w.close("}");

  std::string label = P.label;
  std::replace_if(label.begin(), label.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  std::string header = fmt::format("// gpukit kernel {}{}{} (strided {})\n", name, label.empty() ? "" : " — ",
                                   label, L.key());
  std::string helpers = Helpers.definitions(P);
  std::string source = header + (helpers.empty() ? "" : "\n" + helpers) + w.take();
  return {name, std::move(source), 1};
}

} // namespace

CudaKernel emit_strided_cuda(const ir::Program& p, const EmitOptions& options, const StridedLayout& layout) {
  if (p.outputs().empty())
    throw Error(ErrorKind::Usage, "cannot emit a kernel for a program without outputs");
  if (options.shape.block_size == 0 || options.shape.block_size > 1024)
    throw Error(ErrorKind::Usage, fmt::format("block size {} is outside 1..1024", options.shape.block_size));
  if (layout.flat() || layout.rank > kMaxStridedRank || layout.inputs.size() != p.inputs().size() ||
      layout.outputs.size() != p.outputs().size())
    throw Error(ErrorKind::Internal,
                fmt::format("strided layout '{}' does not fit a program with {} inputs and {} outputs",
                            layout.key(), p.inputs().size(), p.outputs().size()));
  ir::verify_types(p);
  std::string key = fmt::format("{:016x}/{}/{}/{}/{}", ir::structural_hash(p), options.shape.block_size,
                                options.index64, options.restrict_pointers, layout.key());
  std::string name = fmt::format("ew_{:08x}", static_cast<uint32_t>(llvm::xxHash64(key)));
  return StridedEmitter(p, options, layout).emit(name);
}

} // namespace gpukit::codegen
