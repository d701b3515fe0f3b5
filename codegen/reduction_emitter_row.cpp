// The row family of reduction kernels: one block per row, the row kept in
// registers when it fits, reduce-then-broadcast epilogues fused in.
#include "codegen/reduction_builder.hpp"

namespace gpukit::codegen::reduction_detail {

ReductionKernel row_kernel(const ir::ReductionPlan& plan, const ReductionEmitOptions& o,
                           const std::string& base, DType dst, unsigned& width_out) {
  KernelBuilder b(plan, o);
  for (const ir::ReduceStage& s : plan.stages)
    b.add_program(s.body);
  const bool per_element = plan.epilogue && plan.epilogue_scope == ir::EpilogueScope::Element;
  if (per_element)
    b.add_program(*plan.epilogue);
  // The operands read along the row; a per-result epilogue's own operands
  // are read once, at the row's index.
  const std::vector<ReductionParam> row_inputs = b.Inputs;
  if (plan.epilogue && !per_element)
    b.add_program(*plan.epilogue);
  std::vector<ReductionParam> tail = {{ReductionParam::Kind::Destination, "dst", dst}};
  for (const char* g : {"outer", "extent", "inner"})
    tail.push_back({ReductionParam::Kind::Geometry, g, DType::Int64});
  std::vector<ReductionParam> params = b.signature_params(tail);
  const long long C = o.row_length;
  std::vector<ReductionParam> sized = row_inputs;
  if (per_element)
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
    for (const ReductionParam& in : row_inputs)
      w.line("{} {}_r[{}];", pack_of(in), in.name, per_thread);
    w.line("#pragma unroll");
    w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", per_thread);
    w.line("const int gk_p = threadIdx.x + gk_j * {};", o.block_size);
    w.open("if (gk_p < {}) {{", packs);
    for (const ReductionParam& in : row_inputs)
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
      for (const ReductionParam& in : row_inputs)
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
  if (plan.epilogue && !per_element) {
    w.open("if (threadIdx.x == 0) {");
    w.line("// The epilogue, once per row");
    w.line("{} gk_out;", cuda_storage_type(dst));
    b.element(w, *plan.epilogue, [](const std::string& in) { return in + "[gk_row]"; }, "gk_out", "");
    w.line("gk_dst[gk_row] = gk_out;");
    w.close();
  } else if (plan.epilogue) {
    w.line("// The row's elements, from the values above");
    std::string dp = width > 1 ? pack_type(dst, width) : std::string(cuda_storage_type(dst));
    if (cached) {
      w.line("#pragma unroll");
      w.open("for (int gk_j = 0; gk_j < {}; ++gk_j) {{", per_thread);
      w.line("const int gk_p = threadIdx.x + gk_j * {};", o.block_size);
      w.open("if (gk_p < {}) {{", packs);
    } else {
      w.open("for (int gk_p = threadIdx.x; gk_p < {}; gk_p += {}) {{", packs, o.block_size);
      for (const ReductionParam& in : row_inputs)
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
  return {{name, source, width}, ReductionKernel::Role::Row, 0, params};
}


} // namespace gpukit::codegen::reduction_detail
