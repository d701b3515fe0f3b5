#include "codegen/cpu_reduction.hpp"

#include "codegen/cpu_evaluator.hpp"
#include "codegen/passes/pipeline.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpukit::codegen {

namespace {

using ir::ReduceOp;

/// A stage value or accumulator: integers and bools in i, floats in f.
struct Value {
  double f = 0;
  int64_t i = 0;
};

bool is_stage_name(const std::string& n) {
  return n.size() > 1 && n[0] == 'r' && n[1] >= '0' && n[1] <= '9';
}

template <typename T> Value reduce_array(ReduceOp op, const T* v, long long n, long long stride) {
  Value out;
  if (op == ReduceOp::ArgMin || op == ReduceOp::ArgMax) {
    // The first index of the extreme value; NaN is skipped (as min/max
    // skip it), so an all-NaN set gives index 0.
    if (n == 0)
      throw Error(ErrorKind::Usage, fmt::format("{} of an empty set of elements has no index",
                                                ir::reduce_op_name(op)));
    long long best = 0;
    for (long long k = 1; k < n; ++k) {
      T x = v[k * stride], b = v[best * stride];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x))
          continue;
        if (std::isnan(b)) {
          best = k;
          continue;
        }
      }
      if (op == ReduceOp::ArgMin ? x < b : x > b)
        best = k;
    }
    out.i = best;
    out.f = static_cast<double>(best);
    return out;
  }
  if constexpr (std::is_floating_point_v<T>) {
    T acc = op == ReduceOp::Prod ? T(1) : op == ReduceOp::Min ? std::numeric_limits<T>::infinity()
            : op == ReduceOp::Max ? -std::numeric_limits<T>::infinity() : T(0);
    for (long long k = 0; k < n; ++k) {
      T x = v[k * stride];
      switch (op) {
      case ReduceOp::Sum: case ReduceOp::Mean: case ReduceOp::Var: acc = acc + x; break;
      case ReduceOp::Prod: acc = acc * x; break;
      case ReduceOp::Min: acc = std::fmin(acc, x); break;
      case ReduceOp::Max: acc = std::fmax(acc, x); break;
      case ReduceOp::Any: case ReduceOp::All: case ReduceOp::ArgMin: case ReduceOp::ArgMax: break;
      }
    }
    if (op == ReduceOp::Mean)
      acc = acc / static_cast<T>(n);
    out.f = acc;
    out.i = static_cast<int64_t>(std::isfinite(acc) ? acc : 0);
  } else {
    // int64 wraps modulo 2^64: computed in uint64.
    uint64_t acc = op == ReduceOp::Prod || op == ReduceOp::All ? 1 : 0;
    int64_t best = op == ReduceOp::Min ? std::numeric_limits<int64_t>::max()
                                       : std::numeric_limits<int64_t>::min();
    for (long long k = 0; k < n; ++k) {
      int64_t x = static_cast<int64_t>(v[k * stride]);
      switch (op) {
      case ReduceOp::Sum: case ReduceOp::Mean: case ReduceOp::Var: acc += static_cast<uint64_t>(x); break;
      case ReduceOp::Prod: acc *= static_cast<uint64_t>(x); break;
      case ReduceOp::Min: best = std::min(best, x); break;
      case ReduceOp::Max: best = std::max(best, x); break;
      case ReduceOp::Any: acc = acc || x != 0; break;
      case ReduceOp::All: acc = acc && x != 0; break;
      case ReduceOp::ArgMin: case ReduceOp::ArgMax: break;
      }
    }
    out.i = op == ReduceOp::Min || op == ReduceOp::Max ? best : static_cast<int64_t>(acc);
    out.f = static_cast<double>(out.i);
  }
  return out;
}

Value reduce_buffer(ReduceOp op, DType acc, const std::byte* data, long long n, long long stride) {
  switch (acc) {
  case DType::Bool:
  case DType::UInt8: return reduce_array(op, reinterpret_cast<const uint8_t*>(data), n, stride);
  case DType::Int32: return reduce_array(op, reinterpret_cast<const int32_t*>(data), n, stride);
  case DType::Int64: return reduce_array(op, reinterpret_cast<const int64_t*>(data), n, stride);
  case DType::Float32: return reduce_array(op, reinterpret_cast<const float*>(data), n, stride);
  case DType::Float64: return reduce_array(op, reinterpret_cast<const double*>(data), n, stride);
  case DType::Float16:
  case DType::BFloat16: break;
  }
  throw Error(ErrorKind::Internal, "a reduction accumulates in a half-precision type");
}

ir::Constant to_constant(DType t, Value v) {
  return is_floating(t) ? ir::Constant::of_float(t, v.f) : ir::Constant::of_int(t, v.i);
}

/// Stores the stage value `v` as one element of `t` (through the evaluator:
/// the Cast semantics, half precision rounded).
void store_value(DType t, Value v, void* dst) {
  static const auto programs = [] {
    std::array<ir::Program, 2 * std::size(AllDTypes)> ps;
    for (size_t k = 0; k < ps.size(); ++k) {
      ir::Program p;
      ir::NodeId s = p.add_scalar("v", k % 2 ? DType::Float64 : DType::Int64, false);
      p.add_output("out", AllDTypes[k / 2], s);
      ps[k] = ir::optimize(p);
    }
    return ps;
  }();
  size_t k = 2 * static_cast<size_t>(t) + (is_floating(t) ? 1 : 0);
  void* outs[] = {dst};
  evaluate(programs[k], {}, outs,
           {is_floating(t) ? ir::Constant::of_float(DType::Float64, v.f) : ir::Constant::of_int(DType::Int64, v.i)}, 1);
}

class Evaluator {
public:
  Evaluator(const ir::ReductionPlan& plan, const ReductionGeometry& g, const ReductionArgs& a)
      : Plan(plan), G(g), Args(a), Values(plan.stages.size()) {}

  const void* input(const std::string& name) const {
    for (const auto& [n, p] : Args.inputs)
      if (n == name)
        return p;
    throw Error(ErrorKind::Usage, fmt::format("reduction input '{}' was not given", name));
  }
  bool is_column(const std::string& name) const { return llvm::is_contained(Args.column_inputs, name); }

  /// The scalars of `p` for group `group` (stage values of that group).
  std::vector<ir::Constant> scalars(const ir::Program& p, long long group) const {
    std::vector<ir::Constant> out;
    for (const ir::ScalarParam& s : p.scalars()) {
      if (is_stage_name(s.name)) {
        unsigned k = static_cast<unsigned>(std::stoul(s.name.substr(1)));
        out.push_back(to_constant(Plan.stages[k].result, Values[k][group]));
        continue;
      }
      auto it = llvm::find_if(Args.scalars, [&](const auto& kv) { return kv.first == s.name; });
      if (it == Args.scalars.end())
        throw Error(ErrorKind::Usage, fmt::format("reduction scalar '{}' was not given", s.name));
      out.push_back(it->second);
    }
    return out;
  }

  void run(void* dst) {
    const long long groups = G.outer * G.inner;
    for (size_t k = 0; k < Plan.stages.size(); ++k) {
      const ir::ReduceStage& s = Plan.stages[k];
      Values[k].resize(groups);
      DType acc = s.body.outputs().front().type;
      if (G.inner == 1) {
        std::vector<std::byte> tmp(G.extent * size_of(acc));
        for (long long o = 0; o < G.outer; ++o) {
          std::vector<const void*> ins;
          for (const ir::Operand& in : s.body.inputs()) {
            const std::byte* base = static_cast<const std::byte*>(input(in.name));
            ins.push_back(is_column(in.name) ? base : base + o * G.extent * size_of(in.type));
          }
          evaluate(s.body, ins, {tmp.data()}, scalars(s.body, o), G.extent);
          Values[k][o] = reduce_buffer(s.op, acc, tmp.data(), G.extent, 1);
        }
      } else {
        // Columns: evaluate a slice of `inner` elements per (outer, row); stage
        // values vary along the slice, so they become inputs.
        ir::Program body = s.body;
        std::vector<std::vector<std::byte>> stage_arrays;
        std::vector<int> stage_of_input(body.inputs().size(), -1);
        size_t user_inputs = body.inputs().size();
        for (size_t id = 0; id < body.nodes().size(); ++id) {
          ir::Node& n = body.node(static_cast<ir::NodeId>(id));
          if (n.op != ir::Op::Scalar || !is_stage_name(body.scalars()[n.index].name))
            continue;
          unsigned r = static_cast<unsigned>(std::stoul(body.scalars()[n.index].name.substr(1)));
          DType t = body.scalars()[n.index].type;
          std::vector<std::byte> arr(groups * size_of(t));
          for (long long gi = 0; gi < groups; ++gi)
            store_value(t, Values[r][gi], arr.data() + gi * size_of(t));
          stage_arrays.push_back(std::move(arr));
          uint32_t index = static_cast<uint32_t>(body.inputs().size());
          body.add_input(body.scalars()[n.index].name + "_in", t);
          ir::Node& m = body.node(static_cast<ir::NodeId>(id));
          m.op = ir::Op::Input;
          m.index = index;
        }
        std::vector<std::byte> tmp(G.extent * G.inner * size_of(acc));
        for (long long o = 0; o < G.outer; ++o) {
          for (long long e = 0; e < G.extent; ++e) {
            std::vector<const void*> ins;
            for (size_t q = 0; q < body.inputs().size(); ++q) {
              const ir::Operand& in = body.inputs()[q];
              if (q >= user_inputs) {
                ins.push_back(stage_arrays[q - user_inputs].data() + o * G.inner * size_of(in.type));
                continue;
              }
              const std::byte* base = static_cast<const std::byte*>(input(in.name));
              ins.push_back(base + ((o * G.extent + e) * G.inner) * size_of(in.type));
            }
            std::vector<ir::Constant> sc = scalars(s.body, 0); // stage scalars now unused inputs
            evaluate(body, ins, {tmp.data() + e * G.inner * size_of(acc)}, sc, G.inner);
          }
          for (long long i = 0; i < G.inner; ++i)
            Values[k][o * G.inner + i] = reduce_buffer(s.op, acc, tmp.data() + i * size_of(acc), G.extent, G.inner);
        }
      }
    }
    if (!Plan.epilogue) {
      DType t = Plan.stages.back().result;
      for (long long gi = 0; gi < groups; ++gi)
        store_value(t, Values.back()[gi], static_cast<std::byte*>(dst) + gi * size_of(t));
      return;
    }
    const ir::Program& e = *Plan.epilogue;
    DType t = e.outputs().front().type;
    if (Plan.epilogue_scope == ir::EpilogueScope::Group) {
      // Once per result, reading its operands at the result's index.
      for (long long gi = 0; gi < groups; ++gi) {
        std::vector<const void*> ins;
        for (const ir::Operand& in : e.inputs())
          ins.push_back(static_cast<const std::byte*>(input(in.name)) + gi * size_of(in.type));
        evaluate(e, ins, {static_cast<std::byte*>(dst) + gi * size_of(t)}, scalars(e, gi), 1);
      }
      return;
    }
    for (long long o = 0; o < G.outer; ++o) {
      std::vector<const void*> ins;
      for (const ir::Operand& in : e.inputs()) {
        const std::byte* base = static_cast<const std::byte*>(input(in.name));
        ins.push_back(is_column(in.name) ? base : base + o * G.extent * size_of(in.type));
      }
      evaluate(e, ins, {static_cast<std::byte*>(dst) + o * G.extent * size_of(t)}, scalars(e, o), G.extent);
    }
  }

private:
  const ir::ReductionPlan& Plan;
  ReductionGeometry G;
  const ReductionArgs& Args;
  std::vector<std::vector<Value>> Values;
};

} // namespace

void evaluate_reduction(const ir::ReductionPlan& plan, const ReductionGeometry& g, const ReductionArgs& args,
                        void* dst) {
  Evaluator(plan, g, args).run(dst);
}

} // namespace gpukit::codegen
