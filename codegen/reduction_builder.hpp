// Internal to the reduction emitter (reduction_emitter*.cpp): the pieces its
// kernel families share — accumulator types, identities, combine and finish
// expressions, and KernelBuilder, which collects a kernel's parameters and the
// programs it runs. Not part of codegen's interface.
#pragma once

#include "codegen/cuda_helpers.hpp"
#include "codegen/reduction_emitter.hpp"
#include "codegen/source_writer.hpp"
#include "codegen/cuda_expression.hpp"
#include "codegen/passes/type_infer.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <cctype>
#include <functional>

namespace gpukit::codegen::reduction_detail {

using ir::ReduceOp;

/// The C++ type an accumulator of `t` lives in: shuffles need int, not bool
/// or unsigned char.
inline std::string acc_ctype(DType t) {
  if (t == DType::Bool || t == DType::UInt8)
    return "int";
  return std::string(cuda_compute_type(t));
}

inline bool is_arg(ReduceOp op) { return op == ReduceOp::ArgMin || op == ReduceOp::ArgMax; }

/// The type a stage accumulates in inside the kernel: argmin/argmax keep a
/// (value, index) pair, gk_arg_<k>.
inline std::string stage_acc_type(const ir::ReduceStage& s, unsigned k) {
  if (is_arg(s.op))
    return fmt::format("gk_arg_{}", k);
  return acc_ctype(ir::reduce_accumulator_type(s.op, s.element));
}

inline std::string identity(ReduceOp op, DType acc) {
  bool dbl = acc == DType::Float64, flt = acc == DType::Float32, i64 = acc == DType::Int64;
  auto inf = [&](bool negative) -> std::string {
    if (dbl)
      return negative ? "__longlong_as_double(0xfff0000000000000ULL)" : "__longlong_as_double(0x7ff0000000000000ULL)";
    return negative ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
  };
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean:
  case ReduceOp::Var:
  case ReduceOp::Any: return "0";
  case ReduceOp::Prod:
  case ReduceOp::All: return "1";
  case ReduceOp::Min:
    if (dbl || flt)
      return inf(false);
    return i64 ? "9223372036854775807LL" : acc == DType::UInt8 ? "255" : acc == DType::Bool ? "1" : "2147483647";
  case ReduceOp::Max:
    if (dbl || flt)
      return inf(true);
    return i64 ? "(-9223372036854775807LL - 1)" : acc == DType::Int32 ? "(-2147483647 - 1)" : "0";
  case ReduceOp::ArgMin:
  case ReduceOp::ArgMax: {
    // A NaN value with the largest index: every element beats it (see the
    // gk_arg combine), and an all-NaN set keeps the first NaN's index.
    std::string v = dbl   ? "__longlong_as_double(0x7ff8000000000000ULL)"
                    : flt ? "__int_as_float(0x7fffffff)"
                          : identity(op == ReduceOp::ArgMin ? ReduceOp::Min : ReduceOp::Max, acc);
    return fmt::format("{{{}, 9223372036854775807LL}}", v);
  }
  }
  llvm_unreachable("unknown ReduceOp");
}

inline std::string combine(ReduceOp op, DType acc) {
  bool fl = is_floating(acc);
  std::string_view f = acc == DType::Float64 ? "" : "f";
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean:
  case ReduceOp::Var: return "a + b";
  case ReduceOp::Prod: return "a * b";
  case ReduceOp::Min: return fl ? fmt::format("fmin{}(a, b)", f) : "b < a ? b : a";
  case ReduceOp::Max: return fl ? fmt::format("fmax{}(a, b)", f) : "b > a ? b : a";
  case ReduceOp::Any: return "a || b";
  case ReduceOp::All: return "a && b";
  case ReduceOp::ArgMin:
  case ReduceOp::ArgMax: break;
  }
  // argmin/argmax: a number beats NaN; then the smaller (larger) value;
  // then, on a tie (or two NaNs), the smaller index. A total order, so the
  // result does not depend on the combining order: the first index of the
  // extreme value, NaN skipped like min/max skip it.
  return fmt::format("(a.v != a.v) != (b.v != b.v) ? ((a.v != a.v) ? b : a) : "
                     "(a.v == a.v && b.v != a.v) ? (b.v {} a.v ? b : a) : (b.i < a.i ? b : a)",
                     op == ReduceOp::ArgMin ? "<" : ">");
}

/// The value a stage keeps, from its accumulator and the element count.
inline std::string finish(const ir::ReduceStage& s, const std::string& acc, const std::string& count) {
  DType a = ir::reduce_accumulator_type(s.op, s.element);
  if (s.op == ReduceOp::Mean)
    return fmt::format("{} / ({}){}", acc, acc_ctype(a), count);
  if (is_arg(s.op))
    return acc + ".i";
  return acc;
}

/// `value` (of compute type) as it is stored in an array of `t`.
inline std::string stored(DType t, const std::string& value, CudaHelpers& helpers) {
  switch (t) {
  case DType::Float16: helpers.use(Helper::F32ToF16); return fmt::format("gk_f32_to_f16({})", value);
  case DType::BFloat16: helpers.use(Helper::F32ToBF16); return fmt::format("gk_f32_to_bf16({})", value);
  case DType::Bool: return fmt::format("({}) != 0", value);
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64:
  case DType::Float32:
  case DType::Float64: return fmt::format("({}){}", cuda_storage_type(t), value);
  }
  llvm_unreachable("unknown DType");
}

/// A stored stage value read back in its compute type.
inline std::string loaded(DType t, const std::string& value, CudaHelpers& helpers) {
  switch (t) {
  case DType::Float16: helpers.use(Helper::F16ToF32); return fmt::format("gk_f16_to_f32({})", value);
  case DType::BFloat16: helpers.use(Helper::BF16ToF32); return fmt::format("gk_bf16_to_f32({})", value);
  case DType::Bool:
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64:
  case DType::Float32:
  case DType::Float64: return value;
  }
  llvm_unreachable("unknown DType");
}

inline const char* const BlockReduce = R"(// Reduces v over the block; every thread returns the same value. Warps
// reduce with shuffles, then every thread combines the warps' values in
// warp order: the result does not depend on timing (deterministic).
template <typename T, typename F>
__device__ __forceinline__ T gk_block_reduce(T v, F f, T* smem) {
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = f(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads(); // smem may still be read by the previous reduction
  if ((threadIdx.x & 31) == 0)
    smem[threadIdx.x >> 5] = v;
  __syncthreads();
  v = smem[0];
  for (int k = 1; k < (int)(blockDim.x >> 5); ++k)
    v = f(v, smem[k]);
  return v;
}
)";

/// Everything one kernel is made of: its parameters and the programs it runs.
class KernelBuilder {
public:
  KernelBuilder(const ir::ReductionPlan& plan, const ReductionEmitOptions& o) : Plan(plan), Opt(o) {}

  /// Registers a program's inputs and user scalars as parameters.
  void add_program(const ir::Program& p) {
    for (const ir::Operand& in : p.inputs())
      if (!llvm::any_of(Inputs, [&](const ReductionParam& q) { return q.name == in.name; }))
        Inputs.push_back({ReductionParam::Kind::Input, in.name, in.type});
    for (const ir::ScalarParam& s : p.scalars()) {
      bool stage = s.name.size() > 1 && s.name[0] == 'r' && std::isdigit(static_cast<unsigned char>(s.name[1]));
      if (stage)
        continue;
      if (!llvm::any_of(Scalars, [&](const ReductionParam& q) { return q.name == s.name; }))
        Scalars.push_back({ReductionParam::Kind::Scalar, s.name, s.type});
    }
  }

  /// Emits the body of `p` for one element, combining into `acc` (or, with
  /// store set, storing its output).
  void element(SourceWriter& w, const ir::Program& p, const std::function<std::string(const std::string&)>& load,
               const std::string& lvalue, const std::string& type) {
    CudaNames names(p);
    ElementCodegen code(p, names, Helpers);
    w.open("{");
    if (!type.empty())
      w.line("{} gk_v;", type);
    code.emit(w, [&](size_t k) { return load(p.inputs()[k].name); },
              [&](size_t) { return lvalue.empty() ? std::string("gk_v") : lvalue; });
    if (lvalue.empty() && is_arg(Plan.stages[CurrentStage].op))
      w.line("gk_acc = gk_op_{0}()(gk_acc, gk_arg_{0}{{gk_v, (long long)({1})}});", CurrentStage, Index);
    else if (lvalue.empty())
      w.line("gk_acc = gk_op_{}()(gk_acc, gk_v);", CurrentStage);
    w.close();
  }

  std::vector<ReductionParam> signature_params(std::vector<ReductionParam> tail) const {
    std::vector<ReductionParam> all(Inputs);
    all.insert(all.end(), Scalars.begin(), Scalars.end());
    all.insert(all.end(), tail.begin(), tail.end());
    return all;
  }

  std::string signature(const std::string& name, const std::vector<ReductionParam>& params) {
    std::vector<std::string> decls;
    for (const ReductionParam& p : params) {
      switch (p.kind) {
      case ReductionParam::Kind::Input:
        decls.push_back(fmt::format("const {}* __restrict__ {}", cuda_storage_type(p.type), p.name));
        break;
      case ReductionParam::Kind::Scalar:
        decls.push_back(fmt::format("{} {}", cuda_compute_type(p.type), p.name));
        break;
      case ReductionParam::Kind::StageValue:
        decls.push_back(fmt::format("const {}* __restrict__ gk_{}", cuda_storage_type(p.type), p.name));
        break;
      case ReductionParam::Kind::Destination:
        decls.push_back(fmt::format("{}* __restrict__ gk_dst", cuda_storage_type(p.type)));
        break;
      case ReductionParam::Kind::Partials:
        decls.push_back(fmt::format("{}* __restrict__ gk_partials",
                                    PartialsType.empty() ? acc_ctype(p.type) : PartialsType));
        break;
      case ReductionParam::Kind::Counters: decls.push_back("unsigned* __restrict__ gk_counters"); break;
      case ReductionParam::Kind::Geometry: decls.push_back("long long " + p.name); break;
      }
    }
    std::string out = fmt::format("extern \"C\" __global__ void __launch_bounds__({})\n{}(", Opt.block_size, name);
    std::string indent(name.size() + 1, ' ');
    for (size_t k = 0; k < decls.size(); ++k)
      out += fmt::format("{}{}{}", k ? ",\n" + indent : "", decls[k], "");
    return out + ") {";
  }

  /// The functor type combining stage k's accumulators.
  void op_struct(SourceWriter& w, unsigned k) {
    const ir::ReduceStage& s = Plan.stages[k];
    std::string t = stage_acc_type(s, k);
    if (is_arg(s.op)) {
      std::string vt = acc_ctype(ir::reduce_accumulator_type(s.op, s.element));
      w.line("struct gk_arg_{} {{ {} v; long long i; }};", k, vt);
      w.line("// Lets gk_block_reduce shuffle the (value, index) pairs.");
      w.line("__device__ __forceinline__ gk_arg_{0} __shfl_down_sync(unsigned m, gk_arg_{0} a, int o) {{", k);
      w.line("  return {__shfl_down_sync(m, a.v, o), __shfl_down_sync(m, a.i, o)};");
      w.line("}");
    }
    w.line("struct gk_op_{} {{", k);
    w.line("  __device__ {0} operator()({0} a, {0} b) const {{ return {1}; }}", t,
           combine(s.op, ir::reduce_accumulator_type(s.op, s.element)));
    w.line("};");
  }

  std::string finalize_source(const std::string& name, const std::string& body) {
    std::string defs = Helpers.definitions(Plan.stages.front().body);
    // Only the kernels that reduce across a block carry gk_block_reduce
    // (column kernels combine their row groups in shared memory themselves).
    bool block_reduce = body.find("gk_block_reduce(") != std::string::npos;
    return fmt::format("// gpukit reduction kernel {} — {}\n\n{}{}{}", name, Plan.label,
                       defs.empty() ? "" : defs + "\n", block_reduce ? BlockReduce : "", body);
  }

  const ir::ReductionPlan& Plan;
  const ReductionEmitOptions& Opt;
  CudaHelpers Helpers;
  std::vector<ReductionParam> Inputs, Scalars;
  unsigned CurrentStage = 0;
  std::string Index;        ///< argmin/argmax: the element's index along the reduced axis
  std::string PartialsType; ///< the partials' element type, when not the accumulator's
};

/// Writes a signature ending in "{" and indents the body.
inline void open_signature(SourceWriter& w, const std::string& sig) {
  size_t last = sig.rfind('\n');
  if (last != std::string::npos)
    w.lines(std::string_view(sig).substr(0, last));
  w.open(std::string_view(sig).substr(last == std::string::npos ? 0 : last + 1));
}

inline std::string base_name(const ir::ReductionPlan& plan, const ReductionEmitOptions& o) {
  std::string key = fmt::format("{:016x}/{}/{}/{}/{}", ir::structural_hash(plan), static_cast<int>(o.kind),
                                o.block_size, o.vectorize, o.row_length);
  for (const std::string& c : o.column_inputs)
    key += "/" + c;
  return fmt::format("rd_{:08x}", static_cast<uint32_t>(llvm::xxHash64(key)));
}

inline unsigned input_pack_width(const std::vector<ReductionParam>& inputs) {
  unsigned largest = 1;
  for (const ReductionParam& p : inputs)
    largest = std::max(largest, size_of(p.type));
  return 16 / largest;
}

inline std::string pack_type(DType t, unsigned w) { return fmt::format("gk_pack<{}, {}>", cuda_storage_type(t), w); }

/// Stage values r<j> read by `p` (their numbers).
inline std::vector<unsigned> stage_reads(const ir::Program& p) {
  std::vector<unsigned> reads;
  for (const ir::ScalarParam& s : p.scalars())
    if (s.name.size() > 1 && s.name[0] == 'r' && std::isdigit(static_cast<unsigned char>(s.name[1])))
      reads.push_back(static_cast<unsigned>(std::stoul(s.name.substr(1))));
  return reads;
}

inline DType scalar_type(const ir::Program& p, const std::string& name) {
  for (const ir::ScalarParam& s : p.scalars())
    if (s.name == name)
      return s.type;
  return DType::Float32;
}


// The kernel families, one file each.
ReductionKernel partial_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o, unsigned k,
                               const std::string& base, unsigned& width_out, bool fused = false);
ReductionKernel finalize_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o, unsigned k,
                                const std::string& base, DType dst);
ReductionKernel row_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o,
                           const std::string& base, DType dst, unsigned& width_out);

} // namespace gpukit::codegen::reduction_detail
