// Reductions: sum prod min max mean var any all over all elements or over
// one axis, with the reduced expression fused into the reduction kernel,
// and reductions broadcast back over their rows inside a larger expression
// (softmax, layernorm) compiled into one kernel.
//
//   Array<float> s(Shape::scalar());
//   s = gpukit::sum(x * y);                       // full: reads x and y once
//   float v = s.item_sync();                      // the only implicit sync
//   out = exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1);   // softmax, one kernel
//   auto m = gpukit::eval(mean(x, 0));            // column means, shape [cols]
//
// Axis reductions reduce one axis (negative counts from the end). min and
// max of one axis are amin(x, axis) / amax(x, axis) (or min(x, Axis{1})):
// min(x, 1) is the elementwise minimum with 1. A reduction inside a larger
// expression must reduce the last axis; its value is broadcast back over
// the row; a reduction inside an expression that does not read the
// reduced array outside it is evaluated once per result (a norm:
// sqrt(sum(x * x, 1)); an update: out += sum(x, 0)). Result types and
// accumulation: codegen/reduction.cpp. A full reduction's result is a 0-d
// array; item_sync() reads it (the only implicit sync). argmin/argmax give the int64 first index of the extreme
// value along the axis (over all elements: the flat row-major index); NaN
// is skipped like min/max skip it (NumPy instead returns the first NaN's
// index), so x[argmin(x)] == min(x); an all-NaN set gives its first index.
#pragma once

#include "codegen/reduction.hpp"
#include "dsl/assign.hpp"
#include "dsl/reduction_kernel.hpp"

#include <type_traits>

namespace gpukit {

/// An axis for min(x, Axis{1}) / max(x, Axis{1}).
struct Axis {
  int value;
};
/// Keeps the reduced axis as an extent of 1 in eval()'s result.
struct KeepDims {};
inline constexpr KeepDims keepdims{};

namespace detail {

constexpr DType reduce_result(ir::ReduceOp op, DType e) {
  using enum ir::ReduceOp;
  if (op == Sum || op == Prod)
    return is_floating(e) ? e : DType::Int64;
  if (op == Min || op == Max)
    return e;
  if (op == Mean || op == Var)
    return float_type_for(e);
  if (op == ArgMin || op == ArgMax)
    return DType::Int64;
  return DType::Bool;
}

constexpr std::string_view reduce_name(ir::ReduceOp op) {
  using enum ir::ReduceOp;
  switch (op) {
  case Sum: return "sum";
  case Prod: return "prod";
  case Min: return "min";
  case Max: return "max";
  case Mean: return "mean";
  case Var: return "var";
  case ArgMin: return "argmin";
  case ArgMax: return "argmax";
  case Any: return "any";
  case All: return "all";
  }
  return "?";
}

} // namespace detail

/// `op(a)` over every element (HasAxis false) or over one axis.
template <ir::ReduceOp O, typename A, bool HasAxis> struct ReduceExpr : detail::ExprTag {
  static constexpr DType dtype = detail::reduce_result(O, A::dtype);
  static constexpr bool weak = false;
  static constexpr unsigned num_arrays = A::num_arrays;
  /// The axis travels as one collected scalar (never a kernel argument).
  static constexpr unsigned num_scalars = A::num_scalars + (HasAxis ? 1 : 0);

  A a;
  int axis = 0;
  bool keep = false;

  ReduceExpr(const A& a, int axis, bool keep) : a(a), axis(axis), keep(keep) {}
  void collect(detail::LeafSink& s) const {
    a.collect(s);
    if constexpr (HasAxis)
      *s.scalars++ = detail::axis_constant(axis);
  }
  static ir::NodeId build(detail::IrBuilder& b) {
    return detail::build_reduction(b, O, A::dtype, HasAxis, [](detail::IrBuilder& inner) { return A::build(inner); });
  }
  static void print(detail::ExprPrinter& p) {
    p.begin_call(detail::reduce_name(O));
    A::print(p);
    if constexpr (HasAxis) {
      p.next_argument();
      p.scalar_leaf();
    }
    p.end_call();
  }
};

namespace detail {

template <ir::ReduceOp O, typename A, bool H> struct ContainsReduction<ReduceExpr<O, A, H>> : std::true_type {};
template <ir::Op O, typename A> struct ContainsReduction<UnaryExpr<O, A>> : ContainsReduction<A> {};
template <ir::Op O, typename A, typename B>
struct ContainsReduction<BinaryExpr<O, A, B>>
    : std::bool_constant<ContainsReduction<A>::value || ContainsReduction<B>::value> {};
template <ir::Op O, typename A, typename B, typename C>
struct ContainsReduction<TernaryExpr<O, A, B, C>>
    : std::bool_constant<ContainsReduction<A>::value || ContainsReduction<B>::value ||
                         ContainsReduction<C>::value> {};
template <DType To, typename A> struct ContainsReduction<CastExpr<To, A>> : ContainsReduction<A> {};

template <typename E> inline constexpr bool contains_reduction_v = ContainsReduction<std::remove_cvref_t<E>>::value;

/// Bit k: array leaf k (in collect() order) is read outside every
/// reduction. eval() gives such an expression the reduced array's shape
/// (broadcast back over the row), any other one the result's shape.
template <typename Node> struct LeavesOutsideReduction {
  static constexpr uint32_t value = Node::num_arrays >= 32 ? ~0u : (1u << Node::num_arrays) - 1;
};
template <ScalarKind K> struct LeavesOutsideReduction<ScalarLeaf<K>> {
  static constexpr uint32_t value = 0;
};
template <ir::ReduceOp O, typename A, bool H> struct LeavesOutsideReduction<ReduceExpr<O, A, H>> {
  static constexpr uint32_t value = 0;
};
template <ir::Op O, typename A> struct LeavesOutsideReduction<UnaryExpr<O, A>> : LeavesOutsideReduction<A> {};
template <DType To, typename A> struct LeavesOutsideReduction<CastExpr<To, A>> : LeavesOutsideReduction<A> {};
template <ir::Op O, typename A, typename B> struct LeavesOutsideReduction<BinaryExpr<O, A, B>> {
  static constexpr uint32_t value =
      LeavesOutsideReduction<A>::value | LeavesOutsideReduction<B>::value << A::num_arrays;
};
template <ir::Op O, typename A, typename B, typename C> struct LeavesOutsideReduction<TernaryExpr<O, A, B, C>> {
  static constexpr uint32_t value = LeavesOutsideReduction<A>::value |
                                    LeavesOutsideReduction<B>::value << A::num_arrays |
                                    LeavesOutsideReduction<C>::value << (A::num_arrays + B::num_arrays);
};

template <typename Sig> ReductionVariants& reduction_variants_for() {
  static ReductionVariants* variants = new ReductionVariants(Sig::description());
  return *variants;
}

template <typename F, typename T, typename E>
decltype(auto) with_reduction_operands(const std::source_location& where, F&& f, Array<T>& out, const E& node) {
  using Sig = Signature<Target<T, E>>;
  std::array<ArrayBase*, 1> outputs{&out};
  std::array<const ArrayBase*, (E::num_arrays ? E::num_arrays : 1)> leaves{};
  std::array<ir::Constant, (E::num_scalars ? E::num_scalars : 1)> scalars{};
  LeafSink sink{leaves.data(), scalars.data()};
  node.collect(sink);
  AssignmentCall call{outputs, llvm::ArrayRef(leaves.data(), E::num_arrays),
                      llvm::ArrayRef(scalars.data(), E::num_scalars), &where};
  return f(reduction_variants_for<Sig>(), call);
}

template <ir::ReduceOp O, typename E> auto make_reduce(const E& e, int axis, bool keep, std::bool_constant<true>) {
  static_assert(ArrayExpr<E>, "gpukit: reductions take an array or an array expression");
  return ReduceExpr<O, expr_t<E>, true>(to_expr(e), axis, keep);
}
template <ir::ReduceOp O, typename E> auto make_reduce(const E& e) {
  static_assert(ArrayExpr<E>, "gpukit: reductions take an array or an array expression");
  return ReduceExpr<O, expr_t<E>, false>(to_expr(e), 0, false);
}

} // namespace detail

namespace detail {
template <typename T, typename Node>
void run_reduction_assignment(Array<T>& out, const Node& node, const std::source_location& where) {
  with_reduction_operands(
      where, [](ReductionVariants& v, const AssignmentCall& c) { execute_reduction(v, c); }, out, node);
}
} // namespace detail

/// Assigns a reduction (or an expression containing row reductions) to
/// `out`: what `out = sum(...)` does.
template <typename T, typename E>
void assign_reduction(Array<T>& out, const E& e, std::source_location where = std::source_location::current()) {
  detail::run_reduction_assignment(out, detail::to_expr(e), where);
}

/// The plan (KernelInfo::ir) and kernels of `out = e` for a reduction, not run.
template <typename T, typename E>
  requires(detail::contains_reduction_v<E>)
KernelInfo inspect(Array<T>& out, const E& e, std::source_location where = std::source_location::current()) {
  auto node = detail::to_expr(e);
  return detail::with_reduction_operands(
      where, [](detail::ReductionVariants& v, const detail::AssignmentCall& c) { return detail::inspect_reduction(v, c); },
      out, node);
}

/// A new array holding a reduction: 0-d for a full one, the shape without
/// the reduced axis otherwise (with keepdims: that axis as 1).
template <ArrayExpr E>
  requires(detail::contains_reduction_v<E>)
auto eval(const E& e, std::source_location where = std::source_location::current()) {
  using Node = detail::expr_t<E>;
  const Node& node = detail::to_expr(e);
  std::array<const detail::ArrayBase*, (Node::num_arrays ? Node::num_arrays : 1)> leaves{};
  std::array<ir::Constant, (Node::num_scalars ? Node::num_scalars : 1)> scalars{};
  detail::LeafSink sink{leaves.data(), scalars.data()};
  node.collect(sink);
  bool keep = false;
  if constexpr (requires { node.keep; })
    keep = node.keep;
  Shape shape = detail::reduction_result_shape(llvm::ArrayRef(leaves.data(), Node::num_arrays),
                                               llvm::ArrayRef(scalars.data(), Node::num_scalars), keep);
  // An expression reading the reduced array outside its reductions
  // (x - mean(x, 1)) is broadcast back: it keeps that array's shape.
  constexpr uint32_t outside = detail::LeavesOutsideReduction<Node>::value;
  if constexpr (outside != 0) {
    const Shape* main = &leaves[0]->shape();
    for (unsigned k = 0; k < Node::num_arrays; ++k)
      if (leaves[k]->shape().rank() > main->rank())
        main = &leaves[k]->shape();
    for (unsigned k = 0; k < Node::num_arrays; ++k)
      if ((outside >> k & 1) && leaves[k]->shape() == *main)
        shape = *main;
  }
  Array<cpp_type_t<Node::dtype>> out(shape);
  assign_reduction(out, e, where);
  return out;
}

#define GPUKIT_REDUCTION(name, op)                                                                 \
  template <ArrayExpr E> auto name(const E& e) { return detail::make_reduce<ir::ReduceOp::op>(e); } \
  template <ArrayExpr E> auto name(const E& e, int axis) {                                         \
    return detail::make_reduce<ir::ReduceOp::op>(e, axis, false, std::true_type{});               \
  }                                                                                                \
  template <ArrayExpr E> auto name(const E& e, int axis, KeepDims) {                               \
    return detail::make_reduce<ir::ReduceOp::op>(e, axis, true, std::true_type{});                \
  }

GPUKIT_REDUCTION(sum, Sum)
GPUKIT_REDUCTION(prod, Prod)
GPUKIT_REDUCTION(mean, Mean)
GPUKIT_REDUCTION(var, Var)
GPUKIT_REDUCTION(any, Any)
GPUKIT_REDUCTION(all, All)
GPUKIT_REDUCTION(amin, Min)
GPUKIT_REDUCTION(amax, Max)
GPUKIT_REDUCTION(argmin, ArgMin)
GPUKIT_REDUCTION(argmax, ArgMax)
#undef GPUKIT_REDUCTION

/// min(x) / max(x): over every element; min(x, Axis{1}): over an axis.
template <ArrayExpr E> auto min(const E& e) { return detail::make_reduce<ir::ReduceOp::Min>(e); }
template <ArrayExpr E> auto max(const E& e) { return detail::make_reduce<ir::ReduceOp::Max>(e); }
template <ArrayExpr E> auto min(const E& e, Axis a) { return amin(e, a.value); }
template <ArrayExpr E> auto max(const E& e, Axis a) { return amax(e, a.value); }
template <ArrayExpr E> auto min(const E& e, Axis a, KeepDims k) { return amin(e, a.value, k); }
template <ArrayExpr E> auto max(const E& e, Axis a, KeepDims k) { return amax(e, a.value, k); }

} // namespace gpukit
