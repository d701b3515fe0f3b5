// What a reduction computes, decided once here (the CUDA kernels of
// codegen/reduction_emitter.cpp and the CPU evaluator of
// codegen/cpu_reduction.cpp both follow it):
//
//  * Accumulation: float16, bfloat16 and float32 accumulate in float32,
//    float64 in float64; bool, uint8, int32 and int64 sums and products in
//    int64, wrapping modulo 2^64 on overflow (two's complement, as the
//    elementwise integer arithmetic does): sum of int32 never overflows
//    below 2^32 elements of 2^31, and the result is int64 as in NumPy and
//    PyTorch.
//  * min/max are NaN-ignoring like the elementwise min/max (fminf/fmaxf):
//    a NaN is skipped unless every element is NaN. The identity of an empty
//    min is +inf (the type's largest integer), of max -inf.
//  * mean is the float sum divided by the count; var is the mean squared
//    deviation from the mean (ddof = 0, two passes: exact for large means).
//    The mean of an empty set is NaN.
//  * argmin/argmax give the first index of the extreme value as int64
//    (along the axis; over all elements the flat index). NaN is skipped
//    like min/max skip it (NumPy returns the first NaN's index instead), so
//    x[argmin(x)] == min(x); an all-NaN set gives its first index. An empty
//    set is an error (Usage) before any kernel runs. The GPU combines
//    (value, index) pairs under a total order, so any order gives the same
//    index.
//  * any/all: bool; any of nothing is false, all of nothing is true.
//  * Determinism: the same inputs on the same device give the same bits:
//    every kernel combines partial results in a fixed order (no floating
//    atomics). The order differs from the CPU's, so float results agree
//    with the CPU to a rounding tolerance, not bitwise.
#include "codegen/reduction.hpp"

#include "codegen/ir_printer.hpp"
#include "codegen/passes/pipeline.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/xxhash.h>

namespace gpukit::ir {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return "sum";
  case ReduceOp::Prod: return "prod";
  case ReduceOp::Min: return "min";
  case ReduceOp::Max: return "max";
  case ReduceOp::Mean: return "mean";
  case ReduceOp::Var: return "var";
  case ReduceOp::ArgMin: return "argmin";
  case ReduceOp::ArgMax: return "argmax";
  case ReduceOp::Any: return "any";
  case ReduceOp::All: return "all";
  }
  llvm_unreachable("unknown ReduceOp");
}

DType reduce_result_type(ReduceOp op, DType element) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Prod: return is_floating(element) ? element : DType::Int64;
  case ReduceOp::Min:
  case ReduceOp::Max: return element;
  case ReduceOp::Mean:
  case ReduceOp::Var: return float_type_for(element);
  case ReduceOp::ArgMin:
  case ReduceOp::ArgMax: return DType::Int64;
  case ReduceOp::Any:
  case ReduceOp::All: return DType::Bool;
  }
  llvm_unreachable("unknown ReduceOp");
}

DType reduce_accumulator_type(ReduceOp op, DType element) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Prod: return is_floating(element) ? compute_type(element) : DType::Int64;
  case ReduceOp::Min:
  case ReduceOp::Max:
  case ReduceOp::ArgMin:
  case ReduceOp::ArgMax: return compute_type(element);
  case ReduceOp::Mean:
  case ReduceOp::Var: return compute_type(float_type_for(element));
  case ReduceOp::Any:
  case ReduceOp::All: return DType::Bool;
  }
  llvm_unreachable("unknown ReduceOp");
}

DType reduce_body_type(ReduceOp op, DType element) { return reduce_accumulator_type(op, element); }

std::string stage_value_name(unsigned k) { return fmt::format("r{}", k); }

bool is_stage_value_name(std::string_view name) {
  return name.size() > 1 && name[0] == 'r' && name[1] >= '0' && name[1] <= '9';
}

bool reads_stage_values(const Program& program) {
  for (const ScalarParam& s : program.scalars())
    if (is_stage_value_name(s.name))
      return true;
  return false;
}

static Program with_output(Program body, DType type, NodeId value) {
  std::vector<Output>& outs = body.mutable_outputs();
  outs.assign(1, Output{"v", type, value});
  return body;
}

unsigned add_stage(ReductionPlan& plan, ReduceOp op, const Program& body, DType element) {
  NodeId value = body.outputs().front().value;
  // The same reduction written twice (softmax's max(x, 1)) is computed once.
  auto existing = [&](ReduceOp o, const Program& b, DType result) -> int {
    for (size_t k = 0; k < plan.stages.size(); ++k) {
      const ReduceStage& s = plan.stages[k];
      if (s.op == o && s.element == element && s.result == result &&
          structural_hash(s.body) == structural_hash(b))
        return static_cast<int>(k);
    }
    return -1;
  };
  if (op != ReduceOp::Var) {
    DType acc0 = reduce_body_type(op, element);
    Program b = optimize(with_output(body, acc0, value));
    if (int k = existing(op, b, reduce_result_type(op, element)); k >= 0)
      return static_cast<unsigned>(k);
  }
  if (op != ReduceOp::Var) {
    DType acc = reduce_body_type(op, element);
    // The last stage keeps the result type; an intermediate one (read by a
    // later stage) is promoted to the accumulator type by its reader.
    plan.stages.push_back({op, optimize(with_output(body, acc, value)), element,
                           reduce_result_type(op, element)});
    return static_cast<unsigned>(plan.stages.size() - 1);
  }
  DType acc = reduce_accumulator_type(ReduceOp::Var, element);
  // layernorm's mean(x) and var(x) share the mean.
  Program mean_body = optimize(with_output(body, acc, value));
  int shared = existing(ReduceOp::Mean, mean_body, acc);
  if (shared < 0)
    plan.stages.push_back({ReduceOp::Mean, std::move(mean_body), element, acc});
  unsigned mean = shared >= 0 ? static_cast<unsigned>(shared) : static_cast<unsigned>(plan.stages.size() - 1);
  Program dev = body;
  NodeId r = dev.add_scalar(stage_value_name(mean), acc, /*weak=*/false);
  NodeId v = dev.add_cast(acc, value);
  NodeId d = dev.add(Op::Sub, {v, r});
  NodeId sq = dev.add(Op::Mul, {d, d});
  plan.stages.push_back({ReduceOp::Mean, optimize(with_output(dev, acc, sq)), element,
                         reduce_result_type(ReduceOp::Var, element)});
  return static_cast<unsigned>(plan.stages.size() - 1);
}

void set_epilogue(ReductionPlan& plan, const Program& top) {
  if (plan.stages.empty())
    throw gpukit::Error(ErrorKind::Internal, "set_epilogue: the plan has no stage");
  const Output& out = top.outputs().front();
  const Node& value = top.node(out.value);
  bool plain = value.op == Op::Scalar && top.scalars()[value.index].name == stage_value_name(plan.stages.size() - 1) &&
               out.type == plan.stages.back().result;
  if (plain)
    plan.epilogue.reset();
  else
    plan.epilogue = optimize(top);
}

std::string print(const ReductionPlan& plan) {
  std::string out;
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    const ReduceStage& s = plan.stages[k];
    Program body = s.body;
    body.label.clear();
    out += fmt::format("stage r{} = {}<{} -> {}> of:\n{}", k, reduce_op_name(s.op),
                       short_name(s.element), short_name(s.result), print(body));
  }
  if (plan.epilogue) {
    Program e = *plan.epilogue;
    e.label.clear();
    out += plan.epilogue_scope == EpilogueScope::Element ? "epilogue (per element of each row):\n"
                                                         : "epilogue (once per result):\n";
    out += print(e);
  }
  return out;
}

uint64_t structural_hash(const ReductionPlan& plan) {
  std::string key;
  for (const ReduceStage& s : plan.stages)
    key += fmt::format("{}/{}/{}/{:016x};", reduce_op_name(s.op), short_name(s.element),
                       short_name(s.result), structural_hash(s.body));
  if (plan.epilogue)
    key += fmt::format("{}{:016x}", plan.epilogue_scope == EpilogueScope::Element ? "e" : "g",
                       structural_hash(*plan.epilogue));
  return llvm::xxHash64(key);
}

} // namespace gpukit::ir
