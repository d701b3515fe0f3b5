// The nodes of GPUkit's expression templates. `2.0f * x + sin(y)` is not
// computed where it is written: it builds a small value whose *type* is the
// expression (BinaryExpr<Add, BinaryExpr<Mul, ScalarLeaf, ArrayLeaf>, ...>)
// and whose data are the leaves (array pointers, scalar values). Assigning it
// to an array (dsl/assign.hpp) turns the type into one kernel.
//
//   auto e = 2.0f * x + sin(y);             // nothing runs yet
//   static_assert(decltype(e)::dtype == DType::Float32);
//   out = e;                                // one kernel
//
// Every node knows at compile time its result type (`dtype`, computed with
// codegen/dtype.hpp's rules, as the IR's infer_types does at run time) and
// its leaf counts, and has three walkers: collect() (hot path: leaf pointers
// and scalar values), build() (lowers the type to IR) and print() (the text
// for labels and messages). The operators that make nodes live in
// operators.hpp, functions.hpp and where_cast.hpp.
//
// Lifetimes: nodes hold sub-expressions and scalars by value and arrays by
// pointer, so an expression is valid while its arrays live. `out = x +
// Array<float>::full(s, 1.0f)` is fine (the temporary lives to the end of
// the statement); keeping `auto e = x + Array<float>::full(...)` for later
// is not.
#pragma once

#include "codegen/dtype.hpp"
#include "codegen/ir.hpp"
#include "codegen/type_rules.hpp"
#include "dsl/element.hpp"
#include "dsl/expr_printer.hpp"
#include "dsl/ir_builder.hpp"

#include <array>
#include <concepts>
#include <type_traits>

namespace gpukit {

template <typename T> class Array;

namespace detail {

class ArrayBase;

/// The base of every expression node; an empty tag that identifies them.
struct ExprTag {};


/// Where collect() writes leaves; sized by the caller from the node's counts.
struct LeafSink {
  const ArrayBase** arrays;
  ir::Constant* scalars;
};

// The typing rules (ExprType, promote_all, apply_rule) are shared with the
// text front end: codegen/type_rules.hpp.
using gpukit::ExprType;
using gpukit::apply_rule;
using gpukit::is_predicate_op;
using gpukit::is_transcendental_op;
using gpukit::promote_all;
using gpukit::result_rule;
using gpukit::ResultRule;

} // namespace detail

/// True for expression nodes (not for Arrays, which become ArrayLeaf).
template <typename T>
concept ExprNode = std::is_base_of_v<detail::ExprTag, std::remove_cvref_t<T>>;

template <typename T> inline constexpr bool is_array_v = false;
template <typename T> inline constexpr bool is_array_v<Array<T>> = true;

/// An array or an expression: what makes an operator or function a GPUkit one.
template <typename T>
concept ArrayExpr = ExprNode<T> || is_array_v<std::remove_cvref_t<T>>;

/// Anything that can be an operand: an array, an expression or a C++ scalar.
template <typename T>
concept Operand = ArrayExpr<T> || CppScalar<std::remove_cvref_t<T>>;

// ---------------------------------------------------------------------------
// Leaves

/// Element i of an array.
template <typename T> struct ArrayLeaf : detail::ExprTag {
  static constexpr DType dtype = dtype_of<T>;
  static constexpr bool weak = false;
  static constexpr unsigned num_arrays = 1, num_scalars = 0;

  const detail::ArrayBase* array;

  explicit ArrayLeaf(const detail::ArrayBase* a) : array(a) {}
  void collect(detail::LeafSink& s) const { *s.arrays++ = array; }
  static ir::NodeId build(detail::IrBuilder& b) { return b.array_leaf(dtype); }
  static void print(detail::ExprPrinter& p) { p.array_leaf(); }
};

/// A C++ scalar: a kernel argument of its kind, weak (it adapts to the
/// arrays it is combined with). Every integer type shares one node type (and
/// so one kernel), as do every floating type and bool.
template <ScalarKind K> struct ScalarLeaf : detail::ExprTag {
  static constexpr DType dtype = default_type(K);
  static constexpr bool weak = true;
  static constexpr unsigned num_arrays = 0, num_scalars = 1;

  /// The value with the C++ type it came from (for printing and range checks).
  ir::Constant value;

  explicit ScalarLeaf(ir::Constant v) : value(v) {}
  void collect(detail::LeafSink& s) const { *s.scalars++ = value; }
  static ir::NodeId build(detail::IrBuilder& b) { return b.scalar_leaf(K); }
  static void print(detail::ExprPrinter& p) { p.scalar_leaf(); }
};

namespace detail {

/// The DType a C++ scalar's value is recorded with (before any promotion).
template <CppScalar S> constexpr DType natural_type() {
  if constexpr (std::is_same_v<S, bool>)
    return DType::Bool;
  else if constexpr (std::is_integral_v<S>)
    return sizeof(S) <= 4 && std::is_signed_v<S> ? DType::Int32 : DType::Int64;
  else if constexpr (std::is_same_v<S, double>)
    return DType::Float64;
  else
    return DType::Float32; // float, half, bfloat16
}

template <CppScalar S> ir::Constant scalar_constant(S v) {
  constexpr DType t = natural_type<S>();
  if constexpr (std::is_integral_v<S>)
    return ir::Constant::of_int(t, static_cast<int64_t>(v));
  else if constexpr (std::is_same_v<S, double>)
    return ir::Constant::of_float(t, v);
  else
    return ir::Constant::of_float(t, static_cast<float>(v));
}

} // namespace detail

// ---------------------------------------------------------------------------
// Operations

/// `op(a)`: negation, logical not, abs, sqrt, sin, floor, ...
template <ir::Op O, typename A> struct UnaryExpr : detail::ExprTag {
  static constexpr detail::ExprType type = detail::apply_rule(O, {A::dtype, A::weak});
  static constexpr DType dtype = type.dtype;
  static constexpr bool weak = type.weak;
  static constexpr unsigned num_arrays = A::num_arrays, num_scalars = A::num_scalars;

  A a;

  explicit UnaryExpr(const A& a) : a(a) {}
  void collect(detail::LeafSink& s) const { a.collect(s); }
  static ir::NodeId build(detail::IrBuilder& b) { return b.op(O, {A::build(b)}, dtype, weak); }
  static void print(detail::ExprPrinter& p) {
    if (!detail::ExprPrinter::infix_spelling(O).empty()) {
      p.begin_prefix(O);
      A::print(p);
      p.end_prefix();
      return;
    }
    p.begin_call(detail::ExprPrinter::function_name(O));
    A::print(p);
    p.end_call();
  }
};

/// `a op b`: arithmetic, comparisons, logic, min, max, pow.
template <ir::Op O, typename A, typename B> struct BinaryExpr : detail::ExprTag {
  static constexpr detail::ExprType type =
      detail::apply_rule(O, detail::promote_all({{A::dtype, A::weak}, {B::dtype, B::weak}}));
  static constexpr DType dtype = type.dtype;
  static constexpr bool weak = type.weak;
  static constexpr unsigned num_arrays = A::num_arrays + B::num_arrays;
  static constexpr unsigned num_scalars = A::num_scalars + B::num_scalars;

  A a;
  B b;

  BinaryExpr(const A& a, const B& b) : a(a), b(b) {}
  void collect(detail::LeafSink& s) const {
    a.collect(s);
    b.collect(s);
  }
  static ir::NodeId build(detail::IrBuilder& bld) {
    ir::NodeId x = A::build(bld);
    ir::NodeId y = B::build(bld);
    return bld.op(O, {x, y}, dtype, weak);
  }
  static void print(detail::ExprPrinter& p) {
    if (!detail::ExprPrinter::infix_spelling(O).empty()) {
      p.begin_infix(O);
      A::print(p);
      p.between_infix(O);
      B::print(p);
      p.end_infix();
      return;
    }
    p.begin_call(detail::ExprPrinter::function_name(O));
    A::print(p);
    p.next_argument();
    B::print(p);
    p.end_call();
  }
};

/// `fma(a, b, c)`, `clamp(x, lo, hi)` and `where(cond, a, b)`.
template <ir::Op O, typename A, typename B, typename C> struct TernaryExpr : detail::ExprTag {
  static constexpr detail::ExprType type =
      O == ir::Op::Select
          ? detail::promote_all({{B::dtype, B::weak}, {C::dtype, C::weak}})
          : detail::promote_all({{A::dtype, A::weak}, {B::dtype, B::weak}, {C::dtype, C::weak}});
  static constexpr DType dtype = type.dtype;
  static constexpr bool weak = type.weak;
  static constexpr unsigned num_arrays = A::num_arrays + B::num_arrays + C::num_arrays;
  static constexpr unsigned num_scalars = A::num_scalars + B::num_scalars + C::num_scalars;

  A a;
  B b;
  C c;

  TernaryExpr(const A& a, const B& b, const C& c) : a(a), b(b), c(c) {}
  void collect(detail::LeafSink& s) const {
    a.collect(s);
    b.collect(s);
    c.collect(s);
  }
  static ir::NodeId build(detail::IrBuilder& bld) {
    ir::NodeId x = A::build(bld);
    ir::NodeId y = B::build(bld);
    ir::NodeId z = C::build(bld);
    return bld.op(O, {x, y, z}, dtype, weak);
  }
  static void print(detail::ExprPrinter& p) {
    p.begin_call(detail::ExprPrinter::function_name(O));
    A::print(p);
    p.next_argument();
    B::print(p);
    p.next_argument();
    C::print(p);
    p.end_call();
  }
};

/// `cast<T>(a)`: converts to T (docs/TYPES.md says how).
template <DType To, typename A> struct CastExpr : detail::ExprTag {
  static constexpr DType dtype = To;
  static constexpr bool weak = false;
  static constexpr unsigned num_arrays = A::num_arrays, num_scalars = A::num_scalars;

  A a;

  explicit CastExpr(const A& a) : a(a) {}
  void collect(detail::LeafSink& s) const { a.collect(s); }
  static ir::NodeId build(detail::IrBuilder& b) { return b.cast(To, A::build(b)); }
  static void print(detail::ExprPrinter& p) {
    p.begin_call(std::string("cast<") + std::string(detail::ExprPrinter::cpp_name(To)) + ">");
    A::print(p);
    p.end_call();
  }
};

// ---------------------------------------------------------------------------
// Turning operands into nodes

namespace detail {

template <typename T> ArrayLeaf<T> to_expr(const Array<T>& a) { return ArrayLeaf<T>(&a); }
template <ExprNode E> const E& to_expr(const E& e) { return e; }
template <CppScalar S> ScalarLeaf<scalar_kind_of<S>> to_expr(S v) {
  return ScalarLeaf<scalar_kind_of<S>>(scalar_constant(v));
}

/// The node type an operand becomes.
template <typename T>
using expr_t = std::remove_cvref_t<decltype(to_expr(std::declval<const std::remove_cvref_t<T>&>()))>;

/// The message of every "not an operand" static_assert.
#define GPUKIT_OPERAND_MESSAGE                                                                     \
  "gpukit: operands of an array expression must be gpukit::Array<T>, array expressions or C++ "   \
  "arithmetic scalars (bool, integers, float, double, gpukit::half, gpukit::bfloat16)"

template <ir::Op O, typename A> auto make_unary(const A& a) {
  return UnaryExpr<O, expr_t<A>>(to_expr(a));
}

template <ir::Op O, typename A, typename B> auto make_binary(const A& a, const B& b) {
  static_assert(Operand<A> && Operand<B>, GPUKIT_OPERAND_MESSAGE);
  if constexpr (Operand<A> && Operand<B>)
    return BinaryExpr<O, expr_t<A>, expr_t<B>>(to_expr(a), to_expr(b));
}

template <ir::Op O, typename A, typename B, typename C>
auto make_ternary(const A& a, const B& b, const C& c) {
  static_assert(Operand<A> && Operand<B> && Operand<C>, GPUKIT_OPERAND_MESSAGE);
  if constexpr (Operand<A> && Operand<B> && Operand<C>)
    return TernaryExpr<O, expr_t<A>, expr_t<B>, expr_t<C>>(to_expr(a), to_expr(b), to_expr(c));
}

} // namespace detail

/// The element type an expression computes: `expr_dtype<decltype(x + 1)>`.
template <Operand E> inline constexpr DType expr_dtype = detail::expr_t<E>::dtype;

} // namespace gpukit
