#include "codegen/cpu_evaluator.hpp"

#include "codegen/element_semantics.hpp"
#include "codegen/passes/dead_code.hpp"
#include "codegen/passes/type_infer.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

namespace gpukit::codegen {

namespace {

using ir::Node;
using ir::NodeId;
using ir::Op;

constexpr size_t ChunkSize = 1024;
constexpr size_t ParallelThreshold = size_t(1) << 20;
constexpr unsigned MaxThreads = 8;

/// Reads one element of storage type `t` at `src` into a compute value.
template <typename T> T load_storage(DType t, const std::byte* src) {
  auto read = [&](auto v) {
    std::memcpy(&v, src, sizeof(v));
    return v;
  };
  switch (t) {
  case DType::Bool: return sem::convert<T>(read(uint8_t{}) != 0);
  case DType::UInt8: return sem::convert<T>(read(uint8_t{}));
  case DType::Int32: return sem::convert<T>(read(int32_t{}));
  case DType::Int64: return sem::convert<T>(read(int64_t{}));
  case DType::Float16: return sem::convert<T>(detail::half_bits_to_float(read(uint16_t{})));
  case DType::BFloat16: return sem::convert<T>(detail::bfloat16_bits_to_float(read(uint16_t{})));
  case DType::Float32: return sem::convert<T>(read(float{}));
  case DType::Float64: return sem::convert<T>(read(double{}));
  }
  llvm_unreachable("unknown DType");
}

/// Writes the compute value `v` (already of type t) as storage type `t`.
template <typename T> void store_storage(DType t, T v, std::byte* dst) {
  auto write = [&](auto s) { std::memcpy(dst, &s, sizeof(s)); };
  switch (t) {
  case DType::Bool: return write(static_cast<uint8_t>(v ? 1 : 0));
  case DType::UInt8: return write(static_cast<uint8_t>(v));
  case DType::Int32: return write(static_cast<int32_t>(v));
  case DType::Int64: return write(static_cast<int64_t>(v));
  case DType::Float16: return write(detail::float_to_half_bits(static_cast<float>(v)));
  case DType::BFloat16: return write(detail::float_to_bfloat16_bits(static_cast<float>(v)));
  case DType::Float32: return write(static_cast<float>(v));
  case DType::Float64: return write(static_cast<double>(v));
  }
  llvm_unreachable("unknown DType");
}

/// What every thread shares: the program, its live nodes and the arguments.
struct Plan {
  const ir::Program& P;
  std::vector<bool> Live;
  std::vector<ir::Constant> Scalars; ///< converted to their parameters' types
  llvm::ArrayRef<const void*> Inputs;
  llvm::ArrayRef<void*> Outputs;
  const StridedArgs* Strided = nullptr;
};

/// One thread's chunk buffers: a compute-typed array of ChunkSize values per
/// live node. Scalars and literals are filled once, they never change.
class Workspace {
public:
  explicit Workspace(const Plan& plan) : Shared(plan), Offset(plan.P.nodes().size(), 0) {
    size_t live = 0;
    for (size_t id = 0; id < Offset.size(); ++id)
      if (plan.Live[id])
        Offset[id] = live++ * ChunkSize * sizeof(uint64_t);
    Arena = std::make_unique<std::byte[]>(live * ChunkSize * sizeof(uint64_t));
    for (size_t id = 0; id < Offset.size(); ++id) {
      const Node& n = plan.P.nodes()[id];
      if (!plan.Live[id] || (n.op != Op::Scalar && n.op != Op::Const))
        continue;
      const ir::Constant& c = n.op == Op::Scalar ? plan.Scalars[n.index] : n.value;
      sem::with_compute_type(n.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::fill_n(buffer<T>(static_cast<NodeId>(id)), ChunkSize, sem::constant_value<T>(c));
      });
    }
  }

  template <typename T> T* buffer(NodeId id) { return reinterpret_cast<T*>(Arena.get() + Offset[id]); }

  /// Operand `k`'s (inputs, then outputs) element e of the chunk, in
  /// elements from its pointer.
  int64_t element(size_t k, size_t e) const {
    return Shared.Strided ? Offsets[k * ChunkSize + e] : static_cast<int64_t>(ChunkBegin + e);
  }

  /// Evaluates elements [begin, begin + count), count <= ChunkSize.
  void run(size_t begin, size_t count);

private:
  void node(NodeId id, size_t begin, size_t count);
  void call(NodeId id, size_t count);

  /// The strided offsets of the chunk's elements (per operand).
  void strided_offsets(size_t begin, size_t count);

  const Plan& Shared;
  std::vector<size_t> Offset;
  std::unique_ptr<std::byte[]> Arena;
  size_t ChunkBegin = 0;
  std::vector<int64_t> Offsets;
};

// One division per axis per chunk; then the indices count up like an odometer.
void Workspace::strided_offsets(size_t begin, size_t count) {
  const StridedArgs& s = *Shared.Strided;
  size_t operands = s.inputs.size() + s.outputs.size();
  Offsets.resize(operands * ChunkSize);
  AxisStrides index{};
  uint64_t rest = begin;
  for (unsigned a = s.rank; a-- > 1;) {
    index[a] = static_cast<int64_t>(rest % static_cast<uint64_t>(s.extents[a]));
    rest /= static_cast<uint64_t>(s.extents[a]);
  }
  index[0] = static_cast<int64_t>(rest);
  for (size_t e = 0; e < count; ++e) {
    for (size_t k = 0; k < operands; ++k) {
      const AxisStrides& st = k < s.inputs.size() ? s.inputs[k] : s.outputs[k - s.inputs.size()];
      int64_t off = 0;
      for (unsigned a = 0; a < s.rank; ++a)
        off += index[a] * st[a];
      Offsets[k * ChunkSize + e] = off;
    }
    for (unsigned a = s.rank; a-- > 0;) {
      if (++index[a] < s.extents[a] || a == 0)
        break;
      index[a] = 0;
    }
  }
}

void Workspace::run(size_t begin, size_t count) {
  const ir::Program& p = Shared.P;
  ChunkBegin = begin;
  if (Shared.Strided)
    strided_offsets(begin, count);
  for (size_t id = 0; id < p.nodes().size(); ++id)
    if (Shared.Live[id])
      node(static_cast<NodeId>(id), begin, count);
  for (size_t k = 0; k < p.outputs().size(); ++k) {
    const ir::Output& o = p.outputs()[k];
    auto* dst = static_cast<std::byte*>(Shared.Outputs[k]);
    const int64_t size = size_of(o.type);
    const size_t operand = p.inputs().size() + k;
    sem::with_compute_type(o.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* v = buffer<T>(o.value);
      for (size_t e = 0; e < count; ++e)
        store_storage<T>(o.type, v[e], dst + element(operand, e) * size);
    });
  }
}

void Workspace::node(NodeId id, size_t begin, size_t count) {
  const ir::Program& p = Shared.P;
  const Node& n = p.node(id);
  switch (n.op) {
  case Op::Scalar:
  case Op::Const: return; // filled when the workspace was made
  case Op::Input: {
    DType t = p.inputs()[n.index].type;
    const auto* src = static_cast<const std::byte*>(Shared.Inputs[n.index]);
    const int64_t size = size_of(t);
    return sem::with_compute_type(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = buffer<T>(id);
      for (size_t e = 0; e < count; ++e)
        out[e] = load_storage<T>(t, src + element(n.index, e) * size);
    });
  }
  case Op::Cast: {
    DType from = p.node(n.args[0]).type, to = n.type;
    return sem::with_compute_type(from, [&](auto from_tag) {
      using F = typename decltype(from_tag)::type;
      sem::with_compute_type(to, [&](auto to_tag) {
        using T = typename decltype(to_tag)::type;
        const F* a = buffer<F>(n.args[0]);
        T* out = buffer<T>(id);
        for (size_t e = 0; e < count; ++e)
          out[e] = sem::cast_to<T>(a[e], to);
      });
    });
  }
  case Op::Call: return call(id, count);
  case Op::Neg: case Op::Not: case Op::Abs: case Op::Sqrt: case Op::Rsqrt: case Op::Exp:
  case Op::Exp2: case Op::Log: case Op::Log2: case Op::Log10: case Op::Sin: case Op::Cos:
  case Op::Tan: case Op::Tanh: case Op::Sigmoid: case Op::Erf: case Op::Floor: case Op::Ceil:
  case Op::Round: case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Mod:
  case Op::Min: case Op::Max: case Op::Pow: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
  case Op::Eq: case Op::Ne: case Op::And: case Op::Or: case Op::Fma: case Op::Clamp:
  case Op::Select:
    break;
  }

  sem::with_operation(n.op, [&](auto shape) {
    using Shape = decltype(shape);
    if constexpr (std::is_same_v<Shape, sem::NotElementwise>) {
      llvm_unreachable("leaves, casts and calls are handled above");
    } else if constexpr (sem::is_compare_v<Shape>) {
      sem::with_compute_type(p.node(n.args[0]).type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* a = buffer<T>(n.args[0]);
        const T* b = buffer<T>(n.args[1]);
        bool* out = buffer<bool>(id);
        for (size_t e = 0; e < count; ++e)
          out[e] = shape.fn(a[e], b[e]);
      });
    } else {
      sem::with_compute_type(n.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* out = buffer<T>(id);
        if constexpr (sem::is_unary_v<Shape>) {
          const T* a = buffer<T>(n.args[0]);
          for (size_t e = 0; e < count; ++e)
            out[e] = shape.fn(a[e]);
        } else if constexpr (sem::is_binary_v<Shape>) {
          const T* a = buffer<T>(n.args[0]);
          const T* b = buffer<T>(n.args[1]);
          for (size_t e = 0; e < count; ++e)
            out[e] = shape.fn(a[e], b[e]);
        } else if constexpr (sem::is_ternary_v<Shape>) {
          const T* a = buffer<T>(n.args[0]);
          const T* b = buffer<T>(n.args[1]);
          const T* c = buffer<T>(n.args[2]);
          for (size_t e = 0; e < count; ++e)
            out[e] = shape.fn(a[e], b[e], c[e]);
        } else {
          const bool* c = buffer<bool>(n.args[0]);
          const T* a = buffer<T>(n.args[1]);
          const T* b = buffer<T>(n.args[2]);
          for (size_t e = 0; e < count; ++e)
            out[e] = shape.fn(c[e], a[e], b[e]);
        }
      });
    }
  });
}

/// A user function, one element at a time: each argument is passed as its
/// parameter's C++ type (gpukit::half for float16, so rounded, as on the GPU)
/// and the result read back as the function's result type.
void Workspace::call(NodeId id, size_t count) {
  const ir::Program& p = Shared.P;
  const Node& n = p.node(id);
  const ir::UserFunction& fn = p.functions()[n.index];
  llvm::SmallVector<std::array<std::byte, 8>, 4> values(n.args.size());
  llvm::SmallVector<const void*, 4> args;
  for (auto& v : values)
    args.push_back(v.data());
  std::array<std::byte, 8> result{};
  for (size_t e = 0; e < count; ++e) {
    for (size_t k = 0; k < n.args.size(); ++k) {
      DType t = fn.params[k].type;
      sem::with_compute_type(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T v = buffer<T>(n.args[k])[e];
        if (is_half_precision(t))
          store_storage<T>(t, v, values[k].data()); // gpukit::half and bfloat16 are their bits
        else
          std::memcpy(values[k].data(), &v, sizeof(T));
      });
    }
    fn.host(args.data(), result.data());
    sem::with_compute_type(n.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = buffer<T>(id);
      if (n.type == DType::Float16 || n.type == DType::BFloat16) {
        out[e] = sem::convert<T>(load_storage<float>(n.type, result.data()));
      } else if constexpr (std::is_same_v<T, bool>) {
        bool b;
        std::memcpy(&b, result.data(), 1);
        out[e] = b;
      } else {
        std::memcpy(&out[e], result.data(), sizeof(T));
      }
    });
  }
}

} // namespace

void evaluate(const ir::Program& p, llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
              llvm::ArrayRef<ir::Constant> scalars, size_t n, const StridedArgs* strided) {
  auto count_error = [](std::string_view what, size_t want, size_t given) {
    return Error(ErrorKind::Usage,
                 fmt::format("the program takes {} {}, but {} were given", want, what, given));
  };
  if (inputs.size() != p.inputs().size())
    throw count_error("input arrays", p.inputs().size(), inputs.size());
  if (outputs.size() != p.outputs().size())
    throw count_error("output arrays", p.outputs().size(), outputs.size());
  if (scalars.size() != p.scalars().size())
    throw count_error("scalars", p.scalars().size(), scalars.size());
  ir::verify_types(p);

  Plan plan{p, ir::live_nodes(p), {}, inputs, outputs, strided};
  if (strided && (strided->inputs.size() != inputs.size() || strided->outputs.size() != outputs.size() ||
                  strided->rank == 0 || strided->rank > kMaxStridedRank))
    throw Error(ErrorKind::Usage,
                fmt::format("strided arguments of rank {} for {} inputs and {} outputs do not fit a "
                            "program with {} inputs and {} outputs",
                            strided->rank, strided->inputs.size(), strided->outputs.size(),
                            inputs.size(), outputs.size()));
  for (size_t id = 0; id < p.nodes().size(); ++id) {
    const Node& node = p.nodes()[id];
    if (plan.Live[id] && node.op == Op::Call && !p.functions()[node.index].host)
      throw Error(ErrorKind::Unavailable,
                  fmt::format("device function '{}' has no host implementation, so the CPU "
                              "fallback cannot evaluate it; register one with the function",
                              p.functions()[node.index].name));
  }
  for (size_t k = 0; k < scalars.size(); ++k)
    plan.Scalars.push_back(sem::cast_constant(scalars[k], p.scalars()[k].type));
  if (n == 0)
    return;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!inputs[k])
      throw Error(ErrorKind::Usage, fmt::format("input '{}' is a null pointer", p.inputs()[k].name));
  for (size_t k = 0; k < outputs.size(); ++k)
    if (!outputs[k])
      throw Error(ErrorKind::Usage, fmt::format("output '{}' is a null pointer", p.outputs()[k].name));

  size_t chunks = (n + ChunkSize - 1) / ChunkSize;
  auto run_chunks = [&](size_t first, size_t last) {
    Workspace ws(plan);
    for (size_t c = first; c < last; ++c) {
      size_t begin = c * ChunkSize;
      ws.run(begin, std::min(ChunkSize, n - begin));
    }
  };

  unsigned threads = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), MaxThreads);
  if (n < ParallelThreshold || threads == 1) {
    run_chunks(0, chunks);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  for (unsigned t = 0; t < threads; ++t) {
    size_t first = chunks * t / threads, last = chunks * (t + 1) / threads;
    pool.emplace_back([&, t, first, last] {
      try {
        run_chunks(first, last);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (std::thread& th : pool)
    th.join();
  for (const std::exception_ptr& e : errors)
    if (e)
      std::rethrow_exception(e);
}

} // namespace gpukit::codegen
