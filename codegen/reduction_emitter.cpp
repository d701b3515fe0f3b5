// The reduction kernels: see reduction_emitter.hpp for their shapes and
// codegen/reduction.cpp for what they compute.
#include "codegen/reduction_emitter.hpp"

#include "codegen/reduction_builder.hpp"

namespace gpukit::codegen {

namespace reduction_detail {

// --- Full and Column: two kernels per stage ------------------------------------

ReductionKernel partial_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o, unsigned k,
                               const std::string& base, unsigned& width_out, bool fused) {
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
  if (fused) {
    tail.push_back({ReductionParam::Kind::Counters, "counters", DType::Int32});
    tail.push_back({ReductionParam::Kind::Destination, "dst", s.result});
  }
  for (const char* g : {"outer", "extent", "inner"})
    tail.push_back({ReductionParam::Kind::Geometry, g, DType::Int64});
  std::vector<ReductionParam> params = b.signature_params(tail);
  std::string name = fmt::format("{}_{}{}", base, fused ? "c" : "p", k);
  std::string at = stage_acc_type(s, k), vt = std::string(cuda_compute_type(acc));
  b.PartialsType = at;

  SourceWriter w;
  b.op_struct(w, k);
  w.line("");
  open_signature(w, b.signature(name, params));
  const bool full = o.kind == ReductionKind::Full;
  if (full)
    w.line("__shared__ {} gk_smem[32];", at);
  w.line("{} gk_acc = {};", at, identity(s.op, acc));
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
    // Column ([outer, extent, inner], reduced over extent). A block is 32
    // lanes x G row groups (G = block / 32). Why (sum(x, 0) of 4096 x 8192
    // float32 on an H100, bench/column_bench.cpp): one thread per pack
    // column and 66 row slices spent 91% of copy bandwidth in this pass and
    // then 7 us combining 66 slices (81% in all); 32 x 8 tiles need 8x fewer
    // slices for the same number of blocks, and reached 90% with the
    // combining pass (95.8% for this pass alone).
    //  * a lane owns W adjacent columns (a 16-byte pack: W = 4 floats), so a
    //    warp reads 512 contiguous bytes of one row and the G warps G rows;
    //  * each lane keeps U packs in flight (rows e, e + G, ..., e + (U-1)G);
    //  * the G row groups are combined in order through shared memory, the
    //    row slices (column_splits(): about 2 blocks per SM) in order by the
    //    finalize kernel: deterministic.
    // When inner is not a multiple of W (or the inputs are not 16-byte
    // aligned) each lane owns one column and loads scalars.
    unsigned cw = 1;
    if (o.vectorize) {
      KernelBuilder all(plan, o);
      for (const ir::ReduceStage& st : plan.stages)
        all.add_program(st.body);
      cw = input_pack_width(all.Inputs);
    }
    width_out = cw;
    width = cw;
    const unsigned G = o.block_size / 32;
    constexpr unsigned U = 4; // packs in flight per lane
    w.line("// A 1-D grid of column blocks x outer slices x row slices; a block is 32 lanes x {} row groups.", G);
    if (cw > 1)
      w.line("const bool gk_vec = inner % {} == 0;", cw);
    else
      w.line("const bool gk_vec = false;");
    w.line("const int gk_w = gk_vec ? {} : 1; // columns per lane", cw);
    w.line("const long long gk_threads = inner / gk_w;");
    w.line("const long long gk_xblocks = (gk_threads + 31) / 32;");
    w.line("const int gk_lane = threadIdx.x & 31, gk_g = threadIdx.x >> 5;");
    w.line("const long long gk_t = (blockIdx.x % gk_xblocks) * 32 + gk_lane;");
    w.line("const long long gk_o = (blockIdx.x / gk_xblocks) % outer;");
    w.line("const long long gk_z = blockIdx.x / (gk_xblocks * outer);");
    w.line("const long long gk_splits = gridDim.x / (gk_xblocks * outer);");
    w.line("const long long gk_rows = (extent + gk_splits - 1) / gk_splits;");
    w.line("const long long gk_begin = gk_z * gk_rows;");
    w.line("const long long gk_end = gk_begin + gk_rows < extent ? gk_begin + gk_rows : extent;");
    w.line("const long long gk_col = gk_t * gk_w;");
    w.line("// Lanes past the last column still reach the barrier below.");
    w.line("const bool gk_live = gk_t < gk_threads;");
    w.line("__shared__ {} gk_part[{}][32];", at, G);
    w.line("{} gk_accv[{}];", at, cw);
    w.line("#pragma unroll");
    w.line("for (int gk_k = 0; gk_k < {}; ++gk_k)", cw);
    w.line("  gk_accv[gk_k] = gk_acc;");
    auto row_at = [&](const std::string& row) { return fmt::format("(gk_o * extent + {}) * inner + gk_col", row); };
    if (cw > 1) {
      b.Helpers.use(Helper::Pack);
      w.open("if (gk_vec) {");
      for (unsigned r : reads) {
        std::string t(cuda_compute_type(scalar_type(s.body, ir::stage_value_name(r))));
        w.line("{} gk_r{}v[{}];", t, r, cw);
        w.line("#pragma unroll");
        w.line("for (int gk_k = 0; gk_k < {}; ++gk_k)", cw);
        w.line("  gk_r{0}v[gk_k] = gk_live ? {1} : 0;", r,
               loaded(plan.stages[r].result, fmt::format("gk_r{}[gk_o * inner + gk_col + gk_k]", r), b.Helpers));
      }
      // Combines a loaded pack into the W accumulators.
      auto combine_pack = [&](const std::string& pack, const std::string& row) {
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
        return fmt::format("*reinterpret_cast<const {}*>({} + {})", pack_type(in.type, cw), in.name, row_at(row));
      };
      w.line("long long gk_e = gk_begin + gk_g;");
      w.open("if (gk_live) {");
      w.open("for (; gk_e + {} < gk_end; gk_e += {}) {{", (U - 1) * G, U * G);
      w.line("// All {} loads are issued before the first combine.", U);
      for (const ReductionParam& in : b.Inputs)
        w.line("{} {}_p[{}];", pack_type(in.type, cw), in.name, U);
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", U);
      for (const ReductionParam& in : b.Inputs)
        w.line("{}_p[gk_j] = {};", in.name, pack_at(in, fmt::format("gk_e + gk_j * {}", G)));
      w.close();
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", U);
      combine_pack("_p[gk_j]", fmt::format("gk_e + gk_j * {}", G));
      w.close();
      w.close();
      w.open("for (; gk_e < gk_end; gk_e += {}) {{", G);
      for (const ReductionParam& in : b.Inputs)
        w.line("const {} {}_q = {};", pack_type(in.type, cw), in.name, pack_at(in, "gk_e"));
      combine_pack("_q", "gk_e");
      w.close();
      w.close();
      w.reopen("} else {");
    }
    if (cw == 1)
      w.open("{");
    w.line("// One column per lane, scalar loads.");
    w.line("{}& gk_acc = gk_accv[0];", at);
    for (unsigned r : reads)
      w.line("const {} r{} = gk_live ? {} : 0;", cuda_compute_type(scalar_type(s.body, ir::stage_value_name(r))), r,
             loaded(plan.stages[r].result, fmt::format("gk_r{}[gk_o * inner + gk_col]", r), b.Helpers));
    w.line("#pragma unroll 4");
    w.open("for (long long gk_e = gk_begin + gk_g; gk_live && gk_e < gk_end; gk_e += {}) {{", G);
    w.line("const long long gk_i = {};", row_at("gk_e"));
    b.Index = "gk_e";
    b.element(w, s.body, [](const std::string& in) { return in + "[gk_i]"; }, "", vt);
    w.close();
    w.close();
    w.line("// The row groups in order, one column of the pack at a time.");
    w.line("#pragma unroll");
    w.open("for (int gk_k = 0; gk_k < {}; ++gk_k) {{", cw);
    if (cw > 1) {
      w.line("if (gk_k >= gk_w)");
      w.line("  break;");
    }
    w.line("gk_part[gk_g][gk_lane] = gk_accv[gk_k];");
    w.line("__syncthreads();");
    w.open("if (gk_g == 0 && gk_live) {");
    w.line("{} gk_v = gk_part[0][gk_lane];", at);
    w.line("#pragma unroll");
    w.line("for (int gk_j = 1; gk_j < {}; ++gk_j)", G);
    w.line("  gk_v = gk_op_{}()(gk_v, gk_part[gk_j][gk_lane]);", k);
    w.line("gk_partials[(gk_z * outer + gk_o) * inner + gk_col + gk_k] = gk_v;");
    w.close();
    w.line("__syncthreads();");
    w.close();
    if (fused) {
      // The threadFenceReduction pattern: a block's partials are visible
      // before its ticket, and the block drawing the last ticket of its
      // column block adds the slices in slice order (as the finalize kernel
      // does: the same bits), then rearms the counter for the next launch
      // on this stream.
      w.line("// The last block of this column block adds the row slices in order.");
      w.line("if (gk_g == 0)");
      w.line("  __threadfence(); // this block's partials before its ticket");
      w.line("__syncthreads();");
      w.line("__shared__ bool gk_last;");
      w.line("const long long gk_cb = blockIdx.x % (gk_xblocks * outer);");
      w.line("if (threadIdx.x == 0)");
      w.line("  gk_last = atomicAdd(&gk_counters[gk_cb], 1u) == (unsigned)(gk_splits - 1);");
      w.line("__syncthreads();");
      w.line("if (!gk_last)");
      w.line("  return;");
      w.line("if (threadIdx.x == 0)");
      w.line("  gk_counters[gk_cb] = 0;");
      w.line("if (gk_g != 0 || !gk_live)");
      w.line("  return;");
      w.line("__threadfence();");
      w.line("// L2 loads (__ldcg): other blocks' partials are not in this SM's L1. The");
      w.line("// lane's columns are loaded together, slice after slice.");
      w.line("const long long gk_i = gk_o * inner + gk_col;");
      auto each_column = [&](const std::string& statement) {
        w.line("#pragma unroll");
        w.line("for (int gk_k = 0; gk_k < {}; ++gk_k)", cw);
        if (cw > 1) {
          w.line("  if (gk_k < gk_w)");
          w.line("    {}", statement);
        } else {
          w.line("  {}", statement);
        }
      };
      each_column("gk_accv[gk_k] = __ldcg(&gk_partials[gk_i + gk_k]);");
      w.open("for (long long gk_s = 1; gk_s < gk_splits; ++gk_s) {");
      each_column(fmt::format("gk_accv[gk_k] = gk_op_{}()(gk_accv[gk_k], __ldcg(&gk_partials[gk_s * outer * inner + gk_i + gk_k]));", k));
      w.close();
      each_column(fmt::format("gk_dst[gk_i + gk_k] = {};", stored(s.result, finish(s, "gk_accv[gk_k]", "extent"), b.Helpers)));
    }
  }
  w.close();
  std::string source = b.finalize_source(name, w.take());
  return {{name, source, width}, fused ? ReductionKernel::Role::Fused : ReductionKernel::Role::Partial, k, params};
}

ReductionKernel finalize_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o, unsigned k,
                                const std::string& base, DType dst) {
  const ir::ReduceStage& s = plan.stages[k];
  KernelBuilder b(plan, o);
  DType acc = ir::reduce_accumulator_type(s.op, s.element);
  std::string at = stage_acc_type(s, k);
  b.PartialsType = at;
  // The last stage's finalize also evaluates a per-result epilogue
  // (sqrt(r0), out + r0): its operands, scalars and earlier stage values.
  const ir::Program* epilogue = k + 1 == plan.stages.size() && plan.epilogue ? &*plan.epilogue : nullptr;
  std::vector<ReductionParam> tail;
  std::vector<unsigned> reads;
  if (epilogue) {
    b.add_program(*epilogue);
    for (unsigned r : stage_reads(*epilogue))
      if (r != k) {
        reads.push_back(r);
        tail.push_back({ReductionParam::Kind::StageValue, ir::stage_value_name(r), plan.stages[r].result});
      }
  }
  for (ReductionParam p : {ReductionParam{ReductionParam::Kind::Partials, "partials", acc},
                           ReductionParam{ReductionParam::Kind::Destination, "dst", dst},
                           ReductionParam{ReductionParam::Kind::Geometry, "groups", DType::Int64},
                           ReductionParam{ReductionParam::Kind::Geometry, "parts", DType::Int64},
                           ReductionParam{ReductionParam::Kind::Geometry, "count", DType::Int64}})
    tail.push_back(p);
  std::vector<ReductionParam> params = b.signature_params(tail);
  std::string name = fmt::format("{}_f{}", base, k);
  // Stores the result of group `g` from the combined accumulator.
  auto store = [&](SourceWriter& w, const std::string& g) {
    if (!epilogue) {
      w.line("gk_dst[{}] = {};", g, stored(dst, finish(s, "gk_acc", "count"), b.Helpers));
      return;
    }
    w.line("// The epilogue, once per result");
    w.line("const {} r{} = {};", cuda_compute_type(s.result == DType::Bool ? DType::Bool : compute_type(s.result)), k,
           finish(s, "gk_acc", "count"));
    for (unsigned r : reads)
      w.line("const {} r{} = {};", cuda_compute_type(scalar_type(*epilogue, ir::stage_value_name(r))), r,
             loaded(plan.stages[r].result, fmt::format("gk_r{}[{}]", r, g), b.Helpers));
    w.line("{} gk_out;", cuda_storage_type(dst));
    b.element(w, *epilogue, [&](const std::string& in) { return fmt::format("{}[{}]", in, g); }, "gk_out", "");
    w.line("gk_dst[{}] = gk_out;", g);
  };
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
    if (epilogue) {
      w.open("if (threadIdx.x == 0) {");
      store(w, "0");
      w.close();
    } else {
      w.line("if (threadIdx.x == 0)");
      w.line("  gk_dst[0] = {};", stored(dst, finish(s, "gk_acc", "count"), b.Helpers));
    }
  } else {
    w.line("const long long gk_g = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
    w.line("if (gk_g >= groups)");
    w.line("  return;");
    w.line("{} gk_acc = gk_partials[gk_g];", at);
    w.line("// Slices in order; unrolled so that several loads are in flight.");
    w.line("#pragma unroll 8");
    w.line("for (long long gk_s = 1; gk_s < parts; ++gk_s)");
    w.line("  gk_acc = gk_op_{}()(gk_acc, gk_partials[gk_s * groups + gk_g]);", k);
    store(w, "gk_g");
  }
  w.close();
  std::string source = b.finalize_source(name, w.take());
  return {{name, source, 1}, ReductionKernel::Role::Finalize, k, params};
}


} // namespace reduction_detail

using namespace reduction_detail;

unsigned column_threads(long long inner, unsigned width) {
  return static_cast<unsigned>(width > 1 && inner % width == 0 ? inner / width : inner);
}

unsigned column_blocks(long long inner, unsigned width) { return (column_threads(inner, width) + 31) / 32; }

unsigned column_splits(long long outer, long long extent, long long inner, unsigned sms, unsigned width,
                       bool one_kernel) {
  long long blocks = outer * column_blocks(inner, width);
  // Two kernels: about 2 blocks per SM (rounded up) and so few slices that
  // the combining pass is cheap (4096 x 8192 f32 on an H100: 5 slices 88% of
  // copy, 16 slices 85%). One kernel: about 4 blocks per SM (rounded down),
  // so the blocks finish evenly and the last ones add their slices sooner
  // (8 slices 90%, 5 slices 86%, 4 slices 83%). At least 32 rows (4 per
  // row group of 8) per slice, at most 64 slices.
  long long want = (one_kernel ? 4LL : 2LL) * sms;
  long long per = std::max<long long>(blocks, 1);
  long long splits = std::max<long long>(1, one_kernel ? want / per : (want + per - 1) / per);
  splits = std::min<long long>({splits, std::max<long long>(1, extent / 32), 64});
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
  if (plan.epilogue && plan.epilogue_scope == ir::EpilogueScope::Element && o.kind != ReductionKind::Row)
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
  if (o.kind == ReductionKind::Column && o.fuse_column && plan.stages.size() == 1 && !plan.epilogue &&
      !is_arg(plan.stages[0].op)) {
    out.kernels.push_back(partial_kernel(plan, o, 0, base, out.pack_width, /*fused=*/true));
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
