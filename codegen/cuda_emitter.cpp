// What the emitted CUDA computes, decided once here; codegen/element_semantics.hpp
// implements the same decisions for the CPU evaluator and constant folding.
//
//  * Kernels are compiled with --fmad=false (CudaKernel::nvrtc_options):
//    NVRTC would otherwise contract a * b + c into one fma, which rounds once
//    where the CPU rounds twice. Fma is only ever computed where asked for.
//  * Math functions are the accurate ones (sinf, expf, powf, erff, ... for
//    float; sin, exp, ... for double), never the __sinf intrinsics; the
//    kernel must not be compiled with -use_fast_math. IEEE operations (+ - *
//    /, sqrt, fma, fmod, floor, ceil, round, fmin, fmax, conversions) match
//    the CPU bit for bit; the transcendental functions differ from glibc's by
//    a few ulps (CUDA's documented error bounds), and rsqrtf by up to 2 ulps
//    from 1/sqrt.
//  * sigmoid(x) = 1 / (1 + exp(-x)); round() is half away from zero.
//  * Floating min/max are fminf/fmaxf: NaN-ignoring (min(NaN, x) == x), and
//    -0.0 counts as less than +0.0. clamp(x, lo, hi) = min(max(x, lo), hi).
//  * Integer division truncates; x / 0 == 0, x % 0 == 0, INT_MIN / -1 wraps
//    to INT_MIN and INT_MIN % -1 == 0 (helpers gk_div_* / gk_mod_*, a select
//    rather than a trap). The remainder has the dividend's sign. Floating
//    remainder is fmodf/fmod.
//  * Integer + - * wrap modulo 2^bits (two's complement) as the hardware
//    does; bool and uint8 compute as C++ does (in int) and convert back.
//  * Float to integer conversion truncates toward zero and saturates at the
//    type's range (__float2int_rz and friends; a plain C++ cast is undefined
//    out of range); NaN converts to 0, guarded in gk_f32_to_i32 and friends
//    because the hardware gives 0, INT_MAX or INT64_MIN depending on the
//    types (seen on an H100). To bool: x != 0 (NaN is true).
//  * float16 and bfloat16 compute in float32 and are rounded (to nearest even)
//    only when stored, passed to a device function, or explicitly cast to
//    their type. float64 to half precision rounds through float32 (twice), on
//    both back ends. NaN payloads may differ between GPU and CPU.
//  * bool is stored as one byte, 0 or 1; any non-zero byte reads as true.
#include "codegen/cuda_emitter.hpp"

#include "codegen/cuda_expression.hpp"
#include "codegen/ir_printer.hpp"
#include "codegen/passes/type_infer.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <utility>

namespace gpukit::codegen {

namespace {

/// One kernel parameter: its declaration and an optional trailing comment.
struct Param {
  std::string decl;
  std::string comment;
};

/// "name(params) {" laid out like hand-written CUDA: inputs on the first
/// line(s), the rest after; one parameter per line when any has a comment.
std::string signature(const std::string& name, const std::vector<std::vector<Param>>& groups) {
  std::string head = name + "(";
  std::string indent(head.size(), ' ');
  std::vector<const Param*> params;
  for (const auto& g : groups)
    for (const Param& p : g)
      params.push_back(&p);
  bool commented = llvm::any_of(params, [](const Param* p) { return !p->comment.empty(); });

  std::string out = head;
  if (commented) {
    for (size_t k = 0; k < params.size(); ++k) {
      bool last = k + 1 == params.size();
      out += fmt::format("{}{}{}", k ? indent : "", params[k]->decl, last ? ") {" : ",");
      if (!params[k]->comment.empty())
        out += fmt::format("  // {}", params[k]->comment);
      out += '\n';
    }
    return out;
  }
  // Greedy wrapping at 100 columns; each group starts a new line.
  constexpr size_t Width = 100;
  std::vector<std::string> lines;
  std::string current;
  size_t emitted = 0;
  for (const auto& g : groups) {
    if (g.empty())
      continue;
    if (!current.empty())
      lines.push_back(std::exchange(current, ""));
    for (const Param& p : g) {
      std::string piece = p.decl + (++emitted == params.size() ? ") {" : ",");
      if (!current.empty() && head.size() + current.size() + 1 + piece.size() > Width)
        lines.push_back(std::exchange(current, ""));
      current += (current.empty() ? "" : " ") + piece;
    }
  }
  lines.push_back(current);
  for (size_t k = 0; k < lines.size(); ++k)
    out += fmt::format("{}{}\n", k ? indent : "", lines[k]);
  return out;
}

/// The pieces of index arithmetic that differ between 32- and 64-bit indices.
struct Indexing {
  std::string type; ///< "unsigned" or "unsigned long long"
  std::string widen; ///< "" or "(unsigned long long)", applied to blockIdx/gridDim

  /// The first index this thread handles when each thread takes `per` items.
  std::string start(unsigned per) const {
    if (per == 1)
      return fmt::format("{}blockIdx.x * blockDim.x + threadIdx.x", widen);
    return fmt::format("{}blockIdx.x * (blockDim.x * {}) + threadIdx.x", widen, per);
  }
  std::string stride(unsigned per) const {
    if (per == 1)
      return fmt::format("{}gridDim.x * blockDim.x", widen);
    return fmt::format("{}gridDim.x * (blockDim.x * {})", widen, per);
  }
};

/// Opens `for (init; cond; step) {`, breaking the line after the condition
/// when it would pass 110 columns.
void open_for(SourceWriter& w, const std::string& init, const std::string& cond, const std::string& step) {
  std::string one_line = fmt::format("for ({}; {}; {}) {{", init, cond, step);
  if (static_cast<size_t>(w.depth()) * 2 + one_line.size() <= 110) {
    w.open(one_line);
    return;
  }
  w.line(fmt::format("for ({}; {};", init, cond));
  w.open(fmt::format("     {}) {{", step));
}

class ElementwiseEmitter {
public:
  ElementwiseEmitter(const ir::Program& p, const EmitOptions& o)
      : P(p), Opt(o), Names(p), Element(p, Names, Helpers),
        Index{o.index64 ? "unsigned long long" : "unsigned", o.index64 ? "(unsigned long long)" : ""} {}

  CudaKernel emit();

private:
  std::string scalar_load(size_t k) const { return Names.input(k) + "[i]"; }
  std::string scalar_store(size_t k) const { return Names.output(k) + "[i]"; }
  std::string pack_type(DType t, unsigned w) const {
    return fmt::format("gk_pack<{}, {}>", cuda_storage_type(t), w);
  }
  std::vector<size_t> used_inputs() const {
    std::vector<size_t> used;
    for (size_t k = 0; k < P.inputs().size(); ++k)
      if (Element.input_used(k))
        used.push_back(k);
    return used;
  }

  std::vector<std::vector<Param>> parameters() const;
  void scalar_loop(SourceWriter& w);
  void element_body(SourceWriter& w);
  void staged_scalar_loop(SourceWriter& w, unsigned per);
  void vector_loop(SourceWriter& w, unsigned width);
  void staged_vector_loop(SourceWriter& w, unsigned width, unsigned per);
  void tail_loop(SourceWriter& w, unsigned width);
  void pack_compute(SourceWriter& w, unsigned width, const std::string& input_suffix);

  const ir::Program& P;
  EmitOptions Opt;
  CudaHelpers Helpers;
  CudaNames Names;
  ElementCodegen Element;
  Indexing Index;
};

void ElementwiseEmitter::scalar_loop(SourceWriter& w) {
  open_for(w, fmt::format("{} i = {}", Index.type, Index.start(1)), "i < n", "i += " + Index.stride(1));
  element_body(w);
  w.close();
}

// With several outputs, one may be an input (`assign(x, y + 1, z, x * 2)`):
// every input is loaded before the first store, so that all outputs see the
// old values, as in the vector loops and the CPU evaluator.
void ElementwiseEmitter::element_body(SourceWriter& w) {
  if (P.outputs().size() < 2) {
    Element.emit(w, [&](size_t k) { return scalar_load(k); }, [&](size_t k) { return scalar_store(k); });
    return;
  }
  for (size_t k : used_inputs())
    w.line("const {} {}_v = {};", cuda_storage_type(P.inputs()[k].type), Names.input(k), scalar_load(k));
  Element.emit(w, [&](size_t k) { return Names.input(k) + "_v"; }, [&](size_t k) { return scalar_store(k); });
}

// items_per_thread > 1 without packs: each thread reads `per` elements
// blockDim.x apart (coalesced), all loads first, then computes and stores.
void ElementwiseEmitter::staged_scalar_loop(SourceWriter& w, unsigned per) {
  open_for(w, fmt::format("{} i0 = {}", Index.type, Index.start(per)), "i0 < n", "i0 += " + Index.stride(per));
  std::vector<size_t> inputs = used_inputs();
  if (!inputs.empty()) {
    for (size_t k : inputs)
      w.line("{} {}_v[{}];", cuda_storage_type(P.inputs()[k].type), Names.input(k), per);
    w.line("#pragma unroll");
    w.open("for (int j = 0; j < {}; ++j) {{", per);
    w.line("const {} i = i0 + j * blockDim.x;", Index.type);
    w.open("if (i < n) {");
    for (size_t k : inputs)
      w.line("{0}_v[j] = {0}[i];", Names.input(k));
    w.close();
    w.close();
  }
  w.line("#pragma unroll");
  w.open("for (int j = 0; j < {}; ++j) {{", per);
  w.line("const {} i = i0 + j * blockDim.x;", Index.type);
  w.open("if (i < n) {");
  Element.emit(w, [&](size_t k) { return Names.input(k) + "_v[j]"; },
               [&](size_t k) { return scalar_store(k); });
  w.close();
  w.close();
  w.close();
}

/// Computes one pack `p`: element k of each input pack to element k of each
/// output pack, then stores the output packs.
void ElementwiseEmitter::pack_compute(SourceWriter& w, unsigned width, const std::string& input_suffix) {
  for (size_t k = 0; k < P.outputs().size(); ++k)
    w.line("{} {}_p;", pack_type(P.outputs()[k].type, width), Names.output(k));
  w.line("#pragma unroll");
  w.open("for (int k = 0; k < {}; ++k) {{", width);
  Element.emit(w, [&](size_t k) { return Names.input(k) + "_p" + input_suffix + ".v[k]"; },
               [&](size_t k) { return Names.output(k) + "_p.v[k]"; });
  w.close();
  for (size_t k = 0; k < P.outputs().size(); ++k)
    w.line("reinterpret_cast<{0}*>({1})[p] = {1}_p;", pack_type(P.outputs()[k].type, width), Names.output(k));
}

void ElementwiseEmitter::vector_loop(SourceWriter& w, unsigned width) {
  open_for(w, fmt::format("{} p = {}", Index.type, Index.start(1)), "p < n_packs", "p += " + Index.stride(1));
  for (size_t k : used_inputs()) {
    std::string pack = pack_type(P.inputs()[k].type, width);
    w.line("const {0} {1}_p = reinterpret_cast<const {0}*>({1})[p];", pack, Names.input(k));
  }
  pack_compute(w, width, "");
  w.close();
}

// items_per_thread > 1: each thread handles `per` packs blockDim.x apart,
// issuing every load before any computation.
void ElementwiseEmitter::staged_vector_loop(SourceWriter& w, unsigned width, unsigned per) {
  open_for(w, fmt::format("{} p0 = {}", Index.type, Index.start(per)), "p0 < n_packs",
           "p0 += " + Index.stride(per));
  std::vector<size_t> inputs = used_inputs();
  if (!inputs.empty()) {
    for (size_t k : inputs)
      w.line("{} {}_p[{}];", pack_type(P.inputs()[k].type, width), Names.input(k), per);
    w.line("#pragma unroll");
    w.open("for (int j = 0; j < {}; ++j) {{", per);
    w.line("const {} p = p0 + j * blockDim.x;", Index.type);
    w.open("if (p < n_packs) {");
    for (size_t k : inputs)
      w.line("{0}_p[j] = reinterpret_cast<const {1}*>({0})[p];", Names.input(k),
             pack_type(P.inputs()[k].type, width));
    w.close();
    w.close();
  }
  w.line("#pragma unroll");
  w.open("for (int j = 0; j < {}; ++j) {{", per);
  w.line("const {} p = p0 + j * blockDim.x;", Index.type);
  w.open("if (p < n_packs) {");
  pack_compute(w, width, "[j]");
  w.close();
  w.close();
  w.close();
}

void ElementwiseEmitter::tail_loop(SourceWriter& w, unsigned width) {
  w.line("// The last n % {} elements.", width);
  open_for(w, fmt::format("{} i = n_packs * {} + {}", Index.type, width, Index.start(1)), "i < n",
           "i += " + Index.stride(1));
  element_body(w);
  w.close();
}

/// A parameter's comment: the element type where the C++ type does not say
/// it (f16, bf16, bool arrays), and the program's name where it was replaced.
std::string param_comment(std::string_view type_note, const std::string& used, const std::string& wanted) {
  std::string c(type_note);
  if (used != wanted)
    c += fmt::format("{}'{}'", c.empty() ? "" : ", ", wanted);
  return c;
}

std::vector<std::vector<Param>> ElementwiseEmitter::parameters() const {
  auto array_note = [](DType t) {
    return t == DType::Float16 || t == DType::BFloat16 || t == DType::Bool ? short_name(t) : "";
  };
  std::vector<std::vector<Param>> groups(2); // inputs; outputs, scalars and n
  std::string_view restrict = Opt.restrict_pointers ? " __restrict__" : "";
  for (size_t k = 0; k < P.inputs().size(); ++k) {
    const ir::Operand& in = P.inputs()[k];
    groups[0].push_back({fmt::format("const {}*{} {}", cuda_storage_type(in.type), restrict, Names.input(k)),
                         param_comment(array_note(in.type), Names.input(k), in.name)});
  }
  for (size_t k = 0; k < P.outputs().size(); ++k) {
    const ir::Output& out = P.outputs()[k];
    groups[1].push_back({fmt::format("{}*{} {}", cuda_storage_type(out.type), restrict, Names.output(k)),
                         param_comment(array_note(out.type), Names.output(k), out.name)});
  }
  for (size_t k = 0; k < P.scalars().size(); ++k) {
    const ir::ScalarParam& s = P.scalars()[k];
    std::string note = is_half_precision(s.type) ? fmt::format("{} value, passed as float", short_name(s.type)) : "";
    groups[1].push_back({fmt::format("{} {}", cuda_compute_type(s.type), Names.scalar(k)),
                         param_comment(note, Names.scalar(k), s.name)});
  }
  groups[1].push_back({fmt::format("{} n", Index.type), ""});
  return groups;
}

CudaKernel ElementwiseEmitter::emit() {
  const unsigned per = Opt.shape.items_per_thread;
  const unsigned width = Opt.vectorize ? pack_width(P) : 1;
  const std::string name = kernel_name(P, Opt);

  SourceWriter w;
  w.line("extern \"C\" __global__ void __launch_bounds__({})", Opt.shape.block_size);
  // The signature's last line ends in "{": the body opens there.
  std::string sig = signature(name, parameters());
  sig.pop_back();
  size_t last_line = sig.rfind('\n');
  if (last_line != std::string::npos)
    w.lines(std::string_view(sig).substr(0, last_line));
  w.open(std::string_view(sig).substr(last_line == std::string::npos ? 0 : last_line + 1));
  if (width == 1) {
    per == 1 ? scalar_loop(w) : staged_scalar_loop(w, per);
  } else {
    Helpers.use(Helper::Pack);
    w.line("const {} n_packs = n / {};", Index.type, width);
    per == 1 ? vector_loop(w, width) : staged_vector_loop(w, width, per);
    tail_loop(w, width);
  }
  w.close("}");

  std::string label = P.label;
  std::replace_if(label.begin(), label.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  std::string header = label.empty() ? fmt::format("// gpukit kernel {}\n", name)
                                     : fmt::format("// gpukit kernel {} — {}\n", name, label);
  std::string helpers = Helpers.definitions(P);
  std::string source = header + (helpers.empty() ? "" : "\n" + helpers) + w.take();
  return {name, std::move(source), width};
}

} // namespace

unsigned pack_width(const ir::Program& p) {
  unsigned largest = 1;
  std::vector<bool> read(p.inputs().size(), false);
  for (const ir::Node& n : p.nodes())
    if (n.op == ir::Op::Input)
      read[n.index] = true;
  for (size_t k = 0; k < p.inputs().size(); ++k)
    if (read[k])
      largest = std::max(largest, size_of(p.inputs()[k].type));
  for (const ir::Output& o : p.outputs())
    largest = std::max(largest, size_of(o.type));
  return 16 / largest;
}

std::string kernel_name(const ir::Program& p, const EmitOptions& o) {
  // restrict_pointers joins the key only when cleared, so that the names of
  // the (common) restrict kernels stay as they were.
  std::string key = fmt::format("{:016x}/{}/{}/{}/{}{}", ir::structural_hash(p), o.shape.block_size,
                                o.shape.items_per_thread, o.vectorize, o.index64,
                                o.restrict_pointers ? "" : "/alias");
  return fmt::format("ew_{:08x}", static_cast<uint32_t>(llvm::xxHash64(key)));
}

CudaKernel emit_cuda(const ir::Program& p, const EmitOptions& options) {
  if (p.outputs().empty())
    throw Error(ErrorKind::Usage, "cannot emit a kernel for a program without outputs");
  if (options.shape.block_size == 0 || options.shape.block_size > 1024)
    throw Error(ErrorKind::Usage, fmt::format("block size {} is outside 1..1024", options.shape.block_size));
  if (options.shape.items_per_thread == 0 || options.shape.items_per_thread > 64)
    throw Error(ErrorKind::Usage,
                fmt::format("items per thread {} is outside 1..64", options.shape.items_per_thread));
  ir::verify_types(p);
  return ElementwiseEmitter(p, options).emit();
}

} // namespace gpukit::codegen
