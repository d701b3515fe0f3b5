// The reduction kernels: see reduction_emitter.hpp for their shapes and
// codegen/reduction.cpp for what they compute.
#include "codegen/reduction_emitter.hpp"

#include "codegen/cuda_expression.hpp"
#include "codegen/passes/type_infer.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <cctype>
#include <functional>

namespace gpukit::codegen {

namespace {

using ir::ReduceOp;

/// The C++ type an accumulator of `t` lives in: shuffles need int, not bool
/// or unsigned char.
std::string acc_ctype(DType t) {
  if (t == DType::Bool || t == DType::UInt8)
    return "int";
  return std::string(cuda_compute_type(t));
}

bool is_arg(ReduceOp op) { return op == ReduceOp::ArgMin || op == ReduceOp::ArgMax; }

/// The type a stage accumulates in inside the kernel: argmin/argmax keep a
/// (value, index) pair, gk_arg_<k>.
std::string stage_acc_type(const ir::ReduceStage& s, unsigned k) {
  if (is_arg(s.op))
    return fmt::format("gk_arg_{}", k);
  return acc_ctype(ir::reduce_accumulator_type(s.op, s.element));
}

std::string identity(ReduceOp op, DType acc) {
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

std::string combine(ReduceOp op, DType acc) {
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
std::string finish(const ir::ReduceStage& s, const std::string& acc, const std::string& count) {
  DType a = ir::reduce_accumulator_type(s.op, s.element);
  if (s.op == ReduceOp::Mean)
    return fmt::format("{} / ({}){}", acc, acc_ctype(a), count);
  if (is_arg(s.op))
    return acc + ".i";
  return acc;
}

/// `value` (of compute type) as it is stored in an array of `t`.
std::string stored(DType t, const std::string& value, CudaHelpers& helpers) {
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
std::string loaded(DType t, const std::string& value, CudaHelpers& helpers) {
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

const char* BlockReduce = R"(// Reduces v over the block; every thread returns the same value. Warps
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
    return fmt::format("// gpukit reduction kernel {} — {}\n\n{}{}{}", name, Plan.label,
                       defs.empty() ? "" : defs + "\n", BlockReduce, body);
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
void open_signature(SourceWriter& w, const std::string& sig) {
  size_t last = sig.rfind('\n');
  if (last != std::string::npos)
    w.lines(std::string_view(sig).substr(0, last));
  w.open(std::string_view(sig).substr(last == std::string::npos ? 0 : last + 1));
}

std::string base_name(const ir::ReductionPlan& plan, const ReductionEmitOptions& o) {
  std::string key = fmt::format("{:016x}/{}/{}/{}/{}", ir::structural_hash(plan), static_cast<int>(o.kind),
                                o.block_size, o.vectorize, o.row_length);
  for (const std::string& c : o.column_inputs)
    key += "/" + c;
  return fmt::format("rd_{:08x}", static_cast<uint32_t>(llvm::xxHash64(key)));
}

unsigned input_pack_width(const std::vector<ReductionParam>& inputs) {
  unsigned largest = 1;
  for (const ReductionParam& p : inputs)
    largest = std::max(largest, size_of(p.type));
  return 16 / largest;
}

std::string pack_type(DType t, unsigned w) { return fmt::format("gk_pack<{}, {}>", cuda_storage_type(t), w); }

/// Stage values r<j> read by `p` (their numbers).
std::vector<unsigned> stage_reads(const ir::Program& p) {
  std::vector<unsigned> reads;
  for (const ir::ScalarParam& s : p.scalars())
    if (s.name.size() > 1 && s.name[0] == 'r' && std::isdigit(static_cast<unsigned char>(s.name[1])))
      reads.push_back(static_cast<unsigned>(std::stoul(s.name.substr(1))));
  return reads;
}

DType scalar_type(const ir::Program& p, const std::string& name) {
  for (const ir::ScalarParam& s : p.scalars())
    if (s.name == name)
      return s.type;
  return DType::Float32;
}

// --- Full and Column: two kernels per stage ------------------------------------

ReductionKernel partial_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o, unsigned k,
                               const std::string& base, unsigned& width_out) {
  const ir::ReduceStage& s = plan.stages[k];
  KernelBuilder b(plan, o);
  b.CurrentStage = k;
  b.add_program(s.body);
  DType acc = ir::reduce_accumulator_type(s.op, s.element);
  std::vector<ReductionParam> tail;
  std::vector<unsigned> reads = stage_reads(s.body);
  for (unsigned r : reads)
    tail.push_back({ReductionParam::Kind::StageValue, ir::stage_value_name(r), plan.stages[r].result});
  tail.push_back({ReductionParam::Kind::Partials, "partials", acc});
  for (const char* g : {"outer", "extent", "inner"})
    tail.push_back({ReductionParam::Kind::Geometry, g, DType::Int64});
  std::vector<ReductionParam> params = b.signature_params(tail);
  std::string name = fmt::format("{}_p{}", base, k);
  std::string at = stage_acc_type(s, k), vt = std::string(cuda_compute_type(acc));
  b.PartialsType = at;

  SourceWriter w;
  b.op_struct(w, k);
  w.line("");
  open_signature(w, b.signature(name, params));
  w.line("__shared__ {} gk_smem[32];", at);
  w.line("{} gk_acc = {};", at, identity(s.op, acc));
  const bool full = o.kind == ReductionKind::Full;
  auto read_stage_values = [&](const std::string& group) {
    for (unsigned r : reads)
      w.line("const {} r{} = {};", cuda_compute_type(scalar_type(s.body, ir::stage_value_name(r))), r,
             loaded(plan.stages[r].result, fmt::format("gk_r{}[{}]", r, group), b.Helpers));
  };
  unsigned width = full && o.vectorize ? input_pack_width(b.Inputs) : 1;
  width_out = width;
  if (full) {
    read_stage_values("0");
    constexpr unsigned U = 4; // packs in flight per thread
    if (width > 1) {
      b.Helpers.use(Helper::Pack);
      w.line("const long long gk_packs = extent / {};", width);
      w.open("for (long long gk_p0 = (long long)blockIdx.x * blockDim.x * {0} + threadIdx.x; gk_p0 < gk_packs;", U);
      w.line("     gk_p0 += (long long)gridDim.x * blockDim.x * {}) {{", U);
      for (const ReductionParam& in : b.Inputs)
        w.line("{} {}_p[{}];", pack_type(in.type, width), in.name, U);
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", U);
      w.line("const long long gk_p = gk_p0 + (long long)gk_j * blockDim.x;");
      w.open("if (gk_p < gk_packs) {");
      for (const ReductionParam& in : b.Inputs)
        w.line("{0}_p[gk_j] = reinterpret_cast<const {1}*>({0})[gk_p];", in.name, pack_type(in.type, width));
      w.close();
      w.close();
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", U);
      w.open("if (gk_p0 + (long long)gk_j * blockDim.x < gk_packs) {");
      w.line("#pragma unroll");
      w.open("for (int gk_k = 0; gk_k < {}; ++gk_k) {{", width);
      b.Index = fmt::format("(gk_p0 + (long long)gk_j * blockDim.x) * {} + gk_k", width);
      b.element(w, s.body, [](const std::string& in) { return in + "_p[gk_j].v[gk_k]"; }, "", vt);
      w.close();
      w.close();
      w.close();
      w.close();
      w.line("// The last extent % {} elements.", width);
      w.open("for (long long gk_i = gk_packs * {} + (long long)blockIdx.x * blockDim.x + threadIdx.x; gk_i < extent;", width);
      w.line("     gk_i += (long long)gridDim.x * blockDim.x) {");
    } else {
      w.open("for (long long gk_i = (long long)blockIdx.x * blockDim.x + threadIdx.x; gk_i < extent;");
      w.line("     gk_i += (long long)gridDim.x * blockDim.x) {");
    }
    b.Index = "gk_i";
    b.element(w, s.body, [](const std::string& in) { return in + "[gk_i]"; }, "", vt);
    w.close();
    w.line("gk_acc = gk_block_reduce(gk_acc, gk_op_{}(), gk_smem);", k);
    w.line("if (threadIdx.x == 0)");
    w.line("  gk_partials[blockIdx.x] = gk_acc;");
  } else {
    // Column ([outer, extent, inner], reduced over extent). Why this shape
    // (sum(x, 0) of 4096 x 8192 float32 was 74% of copy bandwidth with one
    // 4-byte column per thread and ~17 row slices of ~240 rows):
    //  * each thread owns W adjacent columns (a 16-byte pack, W = 4 floats)
    //    so every load is 16 bytes and a warp reads 512 contiguous bytes;
    //  * the rows are split into slices (column_splits(): about 4 blocks per
    //    SM, at most 128 slices) so the grid covers the GPU even when a row
    //    holds only a few thousand packs;
    //  * the row loop loads U packs before combining any, so each thread has
    //    U independent 16-byte loads in flight (latency hiding without
    //    needing full occupancy);
    //  * the partials are splits x inner accumulators (<= 128 x inner: a few
    //    percent of the input's traffic), added in slice order by the
    //    finalize kernel: deterministic.
    // When inner is not a multiple of W (or the inputs are not 16-byte
    // aligned) each thread owns one column and loads scalars.
    unsigned cw = 1;
    if (o.vectorize) {
      KernelBuilder all(plan, o);
      for (const ir::ReduceStage& st : plan.stages)
        all.add_program(st.body);
      cw = input_pack_width(all.Inputs);
    }
    width_out = cw;
    width = cw;
    constexpr unsigned U = 8; // packs in flight per thread
    w.line("// A 1-D grid of column blocks x outer slices x row slices.");
    w.line("const bool gk_vec = inner % {} == 0;", cw);
    w.line("const long long gk_threads = gk_vec ? inner / {} : inner;", cw);
    w.line("const long long gk_xblocks = (gk_threads + blockDim.x - 1) / blockDim.x;");
    w.line("const long long gk_t = (blockIdx.x % gk_xblocks) * blockDim.x + threadIdx.x;");
    w.line("const long long gk_o = (blockIdx.x / gk_xblocks) % outer;");
    w.line("const long long gk_z = blockIdx.x / (gk_xblocks * outer);");
    w.line("const long long gk_splits = gridDim.x / (gk_xblocks * outer);");
    w.line("const long long gk_rows = (extent + gk_splits - 1) / gk_splits;");
    w.line("const long long gk_begin = gk_z * gk_rows;");
    w.line("const long long gk_end = gk_begin + gk_rows < extent ? gk_begin + gk_rows : extent;");
    w.line("if (gk_t >= gk_threads)");
    w.line("  return;");
    if (cw > 1) {
      b.Helpers.use(Helper::Pack);
      w.open("if (gk_vec) {");
      w.line("const long long gk_col = gk_t * {};", cw);
      for (unsigned r : reads) {
        std::string t(cuda_compute_type(scalar_type(s.body, ir::stage_value_name(r))));
        w.line("{} gk_r{}v[{}];", t, r, cw);
        w.line("#pragma unroll");
        w.line("for (int gk_k = 0; gk_k < {}; ++gk_k)", cw);
        w.line("  gk_r{0}v[gk_k] = {1};", r,
               loaded(plan.stages[r].result, fmt::format("gk_r{}[gk_o * inner + gk_col + gk_k]", r), b.Helpers));
      }
      w.line("{} gk_accv[{}];", at, cw);
      w.line("#pragma unroll");
      w.line("for (int gk_k = 0; gk_k < {}; ++gk_k)", cw);
      w.line("  gk_accv[gk_k] = gk_acc;");
      // Combines pack j of the loaded ones into the W accumulators, in row order.
      auto combine_packs = [&](const std::string& pack, const std::string& row) {
        b.Index = row;
        w.line("#pragma unroll");
        w.open("for (int gk_k = 0; gk_k < {}; ++gk_k) {{", cw);
        w.line("{}& gk_acc = gk_accv[gk_k];", at);
        for (unsigned r : reads)
          w.line("const {} r{} = gk_r{}v[gk_k];", cuda_compute_type(scalar_type(s.body, ir::stage_value_name(r))), r, r);
        b.element(w, s.body, [&](const std::string& in) { return in + pack + ".v[gk_k]"; }, "", vt);
        w.close();
      };
      auto pack_at = [&](const ReductionParam& in, const std::string& row) {
        return fmt::format("*reinterpret_cast<const {}*>({} + (gk_o * extent + {}) * inner + gk_col)",
                           pack_type(in.type, cw), in.name, row);
      };
      w.line("long long gk_e = gk_begin;");
      w.open("for (; gk_e + {} <= gk_end; gk_e += {}) {{", U, U);
      w.line("// All {} loads are issued before the first add.", U);
      for (const ReductionParam& in : b.Inputs)
        w.line("{} {}_p[{}];", pack_type(in.type, cw), in.name, U);
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", U);
      for (const ReductionParam& in : b.Inputs)
        w.line("{}_p[gk_j] = {};", in.name, pack_at(in, "gk_e + gk_j"));
      w.close();
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", U);
      combine_packs("_p[gk_j]", "gk_e + gk_j");
      w.close();
      w.close();
      w.open("for (; gk_e < gk_end; ++gk_e) {");
      for (const ReductionParam& in : b.Inputs)
        w.line("const {} {}_q = {};", pack_type(in.type, cw), in.name, pack_at(in, "gk_e"));
      combine_packs("_q", "gk_e");
      w.close();
      w.line("#pragma unroll");
      w.line("for (int gk_k = 0; gk_k < {}; ++gk_k)", cw);
      w.line("  gk_partials[(gk_z * outer + gk_o) * inner + gk_col + gk_k] = gk_accv[gk_k];");
      w.line("return;");
      w.close();
    }
    w.line("// One column per thread, scalar loads.");
    w.line("const long long gk_col = gk_t;");
    read_stage_values("gk_o * inner + gk_col");
    w.line("#pragma unroll 4");
    w.open("for (long long gk_e = gk_begin; gk_e < gk_end; ++gk_e) {");
    w.line("const long long gk_i = (gk_o * extent + gk_e) * inner + gk_col;");
    b.Index = "gk_e";
    b.element(w, s.body, [](const std::string& in) { return in + "[gk_i]"; }, "", vt);
    w.close();
    w.line("gk_partials[(gk_z * outer + gk_o) * inner + gk_col] = gk_acc;");
  }
  w.close();
  std::string source = b.finalize_source(name, w.take());
  return {{name, source, width, {"--fmad=false"}}, ReductionKernel::Role::Partial, k, params};
}

ReductionKernel finalize_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o, unsigned k,
                                const std::string& base, DType dst) {
  const ir::ReduceStage& s = plan.stages[k];
  KernelBuilder b(plan, o);
  DType acc = ir::reduce_accumulator_type(s.op, s.element);
  std::string at = stage_acc_type(s, k);
  b.PartialsType = at;
  std::vector<ReductionParam> params = {{ReductionParam::Kind::Partials, "partials", acc},
                                        {ReductionParam::Kind::Destination, "dst", dst},
                                        {ReductionParam::Kind::Geometry, "groups", DType::Int64},
                                        {ReductionParam::Kind::Geometry, "parts", DType::Int64},
                                        {ReductionParam::Kind::Geometry, "count", DType::Int64}};
  std::string name = fmt::format("{}_f{}", base, k);
  SourceWriter w;
  b.op_struct(w, k);
  w.line("");
  open_signature(w, b.signature(name, params));
  if (o.kind == ReductionKind::Full) {
    w.line("// One block; partials in a fixed order.");
    w.line("__shared__ {} gk_smem[32];", at);
    w.line("{} gk_acc = {};", at, identity(s.op, acc));
    w.line("for (long long gk_i = threadIdx.x; gk_i < parts; gk_i += blockDim.x)");
    w.line("  gk_acc = gk_op_{}()(gk_acc, gk_partials[gk_i]);", k);
    w.line("gk_acc = gk_block_reduce(gk_acc, gk_op_{}(), gk_smem);", k);
    w.line("if (threadIdx.x == 0)");
    w.line("  gk_dst[0] = {};", stored(dst, finish(s, "gk_acc", "count"), b.Helpers));
  } else {
    w.line("const long long gk_g = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
    w.line("if (gk_g >= groups)");
    w.line("  return;");
    w.line("{} gk_acc = gk_partials[gk_g];", at);
    w.line("// Slices in order; unrolled so that several loads are in flight.");
    w.line("#pragma unroll 8");
    w.line("for (long long gk_s = 1; gk_s < parts; ++gk_s)");
    w.line("  gk_acc = gk_op_{}()(gk_acc, gk_partials[gk_s * groups + gk_g]);", k);
    w.line("gk_dst[gk_g] = {};", stored(dst, finish(s, "gk_acc", "count"), b.Helpers));
  }
  w.close();
  std::string source = b.finalize_source(name, w.take());
  return {{name, source, 1, {"--fmad=false"}}, ReductionKernel::Role::Finalize, k, params};
}

// --- Row: one kernel ----------------------------------------------------------

ReductionKernel row_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o,
                           const std::string& base, DType dst, unsigned& width_out) {
  KernelBuilder b(plan, o);
  for (const ir::ReduceStage& s : plan.stages)
    b.add_program(s.body);
  if (plan.epilogue)
    b.add_program(*plan.epilogue);
  std::vector<ReductionParam> tail = {{ReductionParam::Kind::Destination, "dst", dst}};
  for (const char* g : {"outer", "extent", "inner"})
    tail.push_back({ReductionParam::Kind::Geometry, g, DType::Int64});
  std::vector<ReductionParam> params = b.signature_params(tail);
  const long long C = o.row_length;
  std::vector<ReductionParam> sized = b.Inputs;
  if (plan.epilogue)
    sized.push_back({ReductionParam::Kind::Destination, "dst", dst});
  unsigned width = o.vectorize ? input_pack_width(sized) : 1;
  if (width > 1 && C % width != 0)
    width = 1;
  width_out = width;
  const long long packs = C / width;
  const long long per_thread = (packs + o.block_size - 1) / o.block_size;
  const bool cached = per_thread <= 32;
  auto is_column = [&](const std::string& n) { return llvm::is_contained(o.column_inputs, n); };
  std::string name = base + "_row";

  SourceWriter w;
  for (unsigned k = 0; k < plan.stages.size(); ++k)
    b.op_struct(w, k);
  w.line("");
  open_signature(w, b.signature(name, params));
  w.line("// One block per row of {} elements ({} packs of {}); {}.", C, packs, width,
         cached ? fmt::format("each thread keeps its {} pack(s) in registers", per_thread)
                : "the row is re-read for each pass");
  w.line("const long long gk_row = blockIdx.x;");
  if (width > 1)
    b.Helpers.use(Helper::Pack);
  auto pack_of = [&](const ReductionParam& in) { return width > 1 ? pack_type(in.type, width) : std::string(cuda_storage_type(in.type)); };
  auto global_pack = [&](const ReductionParam& in, const std::string& p) {
    std::string base_ptr = is_column(in.name) ? in.name : fmt::format("({} + gk_row * {}LL)", in.name, C);
    return width > 1 ? fmt::format("reinterpret_cast<const {}*>({})[{}]", pack_of(in), base_ptr, p)
                     : fmt::format("{}[{}]", base_ptr, p);
  };
  auto element_of = [&](const std::string& pack) { return width > 1 ? pack + ".v[gk_k]" : pack; };
  if (cached) {
    for (const ReductionParam& in : b.Inputs)
      w.line("{} {}_r[{}];", pack_of(in), in.name, per_thread);
    w.line("#pragma unroll");
    w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", per_thread);
    w.line("const int gk_p = threadIdx.x + gk_j * {};", o.block_size);
    w.open("if (gk_p < {}) {{", packs);
    for (const ReductionParam& in : b.Inputs)
      w.line("{}_r[gk_j] = {};", in.name, global_pack(in, "gk_p"));
    w.close();
    w.close();
  }
  // Opens the loop over this thread's packs, and the loop over a pack's elements.
  auto open_loops = [&]() {
    if (cached) {
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", per_thread);
      w.line("const int gk_p = threadIdx.x + gk_j * {};", o.block_size);
      w.open("if (gk_p < {}) {{", packs);
    } else {
      w.open("for (int gk_p = threadIdx.x; gk_p < {}; gk_p += {}) {{", packs, o.block_size);
      for (const ReductionParam& in : b.Inputs)
        w.line("const {} {}_r = {};", pack_of(in), in.name, global_pack(in, "gk_p"));
      w.open("{");
    }
    if (width > 1) {
      w.line("#pragma unroll");
      w.open("for (int gk_k = 0; gk_k < {}; ++gk_k) {{", width);
    } else {
      w.open("{");
    }
  };
  auto close_loops = [&]() {
    w.close();
    w.close();
    w.close();
  };
  auto load = [&](const std::string& in) { return element_of(cached ? in + "_r[gk_j]" : in + "_r"); };
  for (unsigned k = 0; k < plan.stages.size(); ++k) {
    const ir::ReduceStage& s = plan.stages[k];
    DType acc = ir::reduce_accumulator_type(s.op, s.element);
    std::string at = stage_acc_type(s, k);
    b.CurrentStage = k;
    b.Index = width > 1 ? fmt::format("gk_p * {} + gk_k", width) : "gk_p";
    w.line("// r{} = {} over the row", k, ir::reduce_op_name(s.op));
    w.line("__shared__ {} gk_smem{}[32];", at, k);
    w.open("const {} r{} = [&] {{", cuda_compute_type(s.result == DType::Bool ? DType::Bool : compute_type(s.result)), k);
    w.line("{} gk_acc = {};", at, identity(s.op, acc));
    open_loops();
    b.element(w, s.body, load, "", std::string(cuda_compute_type(acc)));
    close_loops();
    w.line("gk_acc = gk_block_reduce(gk_acc, gk_op_{}(), gk_smem{});", k, k);
    w.line("return {};", finish(s, "gk_acc", std::to_string(C)));
    w.close("}();");
  }
  if (plan.epilogue) {
    w.line("// The row's elements, from the values above");
    std::string dp = width > 1 ? pack_type(dst, width) : std::string(cuda_storage_type(dst));
    if (cached) {
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", per_thread);
      w.line("const int gk_p = threadIdx.x + gk_j * {};", o.block_size);
      w.open("if (gk_p < {}) {{", packs);
    } else {
      w.open("for (int gk_p = threadIdx.x; gk_p < {}; gk_p += {}) {{", packs, o.block_size);
      for (const ReductionParam& in : b.Inputs)
        w.line("const {} {}_r = {};", pack_of(in), in.name, global_pack(in, "gk_p"));
      w.open("{");
    }
    w.line("{} gk_out;", dp);
    if (width > 1) {
      w.line("#pragma unroll");
      w.open("for (int gk_k = 0; gk_k < {}; ++gk_k) {{", width);
      b.element(w, *plan.epilogue, load, "gk_out.v[gk_k]", "");
      w.close();
      w.line("reinterpret_cast<{}*>(gk_dst + gk_row * {}LL)[gk_p] = gk_out;", dp, C);
    } else {
      b.element(w, *plan.epilogue, load, "gk_out", "");
      w.line("gk_dst[gk_row * {}LL + gk_p] = gk_out;", C);
    }
    w.close();
    w.close();
  } else {
    unsigned last = static_cast<unsigned>(plan.stages.size() - 1);
    w.line("if (threadIdx.x == 0)");
    w.line("  gk_dst[gk_row] = {};", stored(dst, "r" + std::to_string(last), b.Helpers));
  }
  w.close();
  std::string source = b.finalize_source(name, w.take());
  return {{name, source, width, {"--fmad=false"}}, ReductionKernel::Role::Row, 0, params};
}

} // namespace

unsigned column_threads(long long inner, unsigned width) {
  return static_cast<unsigned>(width > 1 && inner % width == 0 ? inner / width : inner);
}

unsigned column_splits(long long outer, long long extent, long long inner, unsigned block, unsigned sms,
                       unsigned width) {
  long long blocks = outer * ((column_threads(inner, width) + block - 1) / block);
  // About 4 blocks of 256 per SM (half occupancy, each thread with 8 packs
  // in flight) and at most 128 slices, so the finalize pass reads at most
  // 128 x inner partials; at least 16 rows per slice.
  long long want = 4LL * sms;
  long long splits = std::max<long long>(1, (want + blocks - 1) / std::max<long long>(blocks, 1));
  splits = std::min<long long>({splits, std::max<long long>(1, extent / 16), 128});
  return static_cast<unsigned>(splits);
}

unsigned full_grid(long long n, unsigned width, unsigned block, unsigned sms) {
  long long needed = (n / width + 4LL * block - 1) / (4LL * block);
  return static_cast<unsigned>(std::clamp<long long>(needed, 1, 8LL * sms));
}

ReductionKernels emit_reduction(const ir::ReductionPlan& plan, const ReductionEmitOptions& o) {
  if (plan.stages.empty())
    throw Error(ErrorKind::Usage, "a reduction plan needs at least one stage");
  if (o.block_size < 32 || o.block_size > 1024 || o.block_size % 32)
    throw Error(ErrorKind::Usage,
                fmt::format("reduction block size {} must be a multiple of 32 in 32..1024", o.block_size));
  if (plan.epilogue && o.kind != ReductionKind::Row)
    throw Error(ErrorKind::Usage, "a reduce-then-broadcast expression must reduce the last axis");
  for (const ir::ReduceStage& s : plan.stages)
    ir::verify_types(s.body);
  std::string base = base_name(plan, o);
  ReductionKernels out;
  DType final_type = plan.epilogue ? plan.epilogue->outputs().front().type : plan.stages.back().result;
  if (o.kind == ReductionKind::Row) {
    if (o.row_length <= 0)
      throw Error(ErrorKind::Usage, "a row reduction kernel needs the row length");
    out.kernels.push_back(row_kernel(plan, o, base, final_type, out.pack_width));
    return out;
  }
  for (unsigned k = 0; k < plan.stages.size(); ++k) {
    unsigned width = 1;
    out.kernels.push_back(partial_kernel(plan, o, k, base, width));
    if (k == 0)
      out.pack_width = width;
    DType dst = k + 1 == plan.stages.size() ? final_type : plan.stages[k].result;
    out.kernels.push_back(finalize_kernel(plan, o, k, base, dst));
  }
  return out;
}

} // namespace gpukit::codegen
