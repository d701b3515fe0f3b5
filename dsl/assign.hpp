// Assignment: where an expression becomes one kernel.
//
//   out = 2.0f * x + sin(y);                       // one output
//   gpukit::assign(call, c_expr, put, p_expr);     // several outputs, one kernel
//   auto z = gpukit::eval(x * y);                  // a new Array<float>
//   std::string cuda = gpukit::source_of(out, 2.0f * x + sin(y));   // not run
//
// Each assignment's C++ type (output types + expression types) has its own
// cache of compiled variants (a function-local static), so a second
// assignment of the same type only collects the operands' pointers and
// scalar values into stack arrays and launches: no IR, no source, no
// hashing. A new scalar value never recompiles (scalars are kernel
// arguments). Array operands broadcast to the outputs' shape by NumPy's
// rules (dsl/broadcast.hpp) and may be views; Error{Shape} names the operand
// that does not broadcast.
//
// Several outputs: up to four (output, expression) pairs per assign(); the
// outputs must be different arrays and share one shape; the expressions
// read their inputs once, so `assign(x, x + 1, y, x * 2)` uses the old x in
// both.
#pragma once

#include "dsl/array.hpp"
#include "dsl/broadcast.hpp"
#include "dsl/expression_kernel.hpp"

#include <array>
#include <source_location>
#include <string>

namespace gpukit {

namespace detail {

/// One (output, expression node) pair of an assignment.
template <typename T, typename E> struct Target {
  Array<T>* out;
  const E* expr;
};

/// The C++ type of an assignment: its outputs' element types and its
/// expressions' node types. The unit of kernel caching.
template <typename... Targets> struct Signature;
template <typename... T, typename... E> struct Signature<Target<T, E>...> {
  static constexpr unsigned num_outputs = sizeof...(T);
  static constexpr unsigned num_arrays = (E::num_arrays + ... + 0);
  static constexpr unsigned num_scalars = (E::num_scalars + ... + 0);

  static void build(IrBuilder& b) {
    // A fold over the comma operator: left to right, the order collect() uses.
    (b.output(dtype_of<T>, E::build(b), E::dtype, E::weak), ...);
  }
  static void print(ExprPrinter& p, unsigned k) {
    unsigned i = 0;
    ((i++ == k ? E::print(p) : void()), ...);
  }
  static const AssignmentType& description() {
    static const AssignmentType type{num_outputs, num_arrays, num_scalars, &build, &print};
    return type;
  }
};

/// The compiled variants of one assignment type. Never destroyed, so
/// assignments in static destructors still work.
template <typename Sig> KernelVariants& variants_for() {
  static KernelVariants* variants = new KernelVariants(Sig::description());
  return *variants;
}

/// Collects the targets' operands into stack arrays and hands them to `f`
/// (execute or inspect) with the assignment type's variants.
template <typename F, typename... T, typename... E>
decltype(auto) with_operands(const std::source_location& where, F&& f,
                             Target<T, E>... targets) {
  using Sig = Signature<Target<T, E>...>;
  constexpr unsigned num_arrays = Sig::num_arrays, num_scalars = Sig::num_scalars;
  std::array<ArrayBase*, sizeof...(T)> outputs{targets.out...};
  std::array<const ArrayBase*, (num_arrays ? num_arrays : 1)> leaves{};
  std::array<ir::Constant, (num_scalars ? num_scalars : 1)> scalars{};
  LeafSink sink{leaves.data(), scalars.data()};
  (targets.expr->collect(sink), ...);
  AssignmentCall call{outputs, llvm::ArrayRef(leaves.data(), num_arrays),
                      llvm::ArrayRef(scalars.data(), num_scalars), &where};
  return f(variants_for<Sig>(), call);
}

template <typename... T, typename... E>
void run_assignment(const std::source_location& where, Target<T, E>... targets) {
  with_operands(where, [](KernelVariants& v, const AssignmentCall& c) { execute(v, c); },
                targets...);
}

template <typename... T, typename... E>
KernelInfo inspect_assignment(const std::source_location& where, Target<T, E>... targets) {
  return with_operands(
      where, [](KernelVariants& v, const AssignmentCall& c) { return inspect(v, c); }, targets...);
}

#define GPUKIT_RHS_MESSAGE                                                                         \
  "gpukit: the right-hand side of an assignment to an Array must be an array expression, a "      \
  "gpukit::Array or a C++ arithmetic scalar"

template <Update U> constexpr ir::Op update_op() {
  if constexpr (U == Update::Add)
    return ir::Op::Add;
  else if constexpr (U == Update::Sub)
    return ir::Op::Sub;
  else if constexpr (U == Update::Mul)
    return ir::Op::Mul;
  else
    return ir::Op::Div;
}

/// Whether an expression node contains a reduction (specialised in
/// dsl/reduce.hpp); such assignments go to the reduction engine.
template <typename Node> struct ContainsReduction : std::false_type {};
template <typename T, typename Node>
void run_reduction_assignment(Array<T>& out, const Node& node, const std::source_location& where);

template <typename T, Update U, typename E>
void update_thunk(Array<T>& out, const void* rhs, const std::source_location& where) {
  static_assert(Operand<E>, GPUKIT_RHS_MESSAGE);
  if constexpr (Operand<E>) {
    const E& e = *static_cast<const E*>(rhs);
    if constexpr (U == Update::Assign && ContainsReduction<expr_t<E>>::value) {
      run_reduction_assignment(out, to_expr(e), where);
    } else if constexpr (U == Update::Assign) {
      auto node = to_expr(e);
      run_assignment(where, Target<T, decltype(node)>{&out, &node});
    } else {
      // `out += e` is `out = out + e`: one kernel reading and writing out
      // (with a reduction: its epilogue reads out once per result).
      auto node = make_binary<update_op<U>()>(out, e);
      if constexpr (ContainsReduction<expr_t<E>>::value)
        run_reduction_assignment(out, node, where);
      else
        run_assignment(where, Target<T, decltype(node)>{&out, &node});
    }
  }
}

/// Error{Shape}: an expression with no array operand has no shape.
[[noreturn]] void throw_no_shape(const AssignmentType& type, llvm::ArrayRef<ir::Constant> scalars);

template <typename E> Shape shape_of_expression(const E& e) {
  using Node = expr_t<E>;
  std::array<const ArrayBase*, (Node::num_arrays ? Node::num_arrays : 1)> leaves{};
  std::array<ir::Constant, (Node::num_scalars ? Node::num_scalars : 1)> scalars{};
  LeafSink sink{leaves.data(), scalars.data()};
  const Node& node = to_expr(e);
  node.collect(sink);
  using Sig = Signature<Target<cpp_type_t<Node::dtype>, Node>>;
  if constexpr (Node::num_arrays == 0) {
    throw_no_shape(Sig::description(), llvm::ArrayRef(scalars.data(), Node::num_scalars));
  } else {
    // NumPy broadcasting: `eval(x + bias)` has x's shape for a bias row.
    return expression_shape(Sig::description(), llvm::ArrayRef(leaves.data(), Node::num_arrays),
                            llvm::ArrayRef(scalars.data(), Node::num_scalars));
  }
}

template <typename E> auto target_node(const E& e) {
  static_assert(Operand<E>, GPUKIT_RHS_MESSAGE);
  return to_expr(e);
}

} // namespace detail

/// Evaluates up to four (output, expression) pairs with one kernel:
///   gpukit::assign(call, S * cnd(d1) - X * e * cnd(d2), put, X * e * cnd(-d2) - S * cnd(-d1));
template <typename T1, typename E1, typename T2, typename E2>
void assign(Array<T1>& out1, const E1& e1, Array<T2>& out2, const E2& e2,
            std::source_location where = std::source_location::current()) {
  auto n1 = detail::target_node(e1);
  auto n2 = detail::target_node(e2);
  detail::run_assignment(where, detail::Target<T1, decltype(n1)>{&out1, &n1},
                         detail::Target<T2, decltype(n2)>{&out2, &n2});
}

template <typename T1, typename E1, typename T2, typename E2, typename T3, typename E3>
void assign(Array<T1>& out1, const E1& e1, Array<T2>& out2, const E2& e2, Array<T3>& out3,
            const E3& e3, std::source_location where = std::source_location::current()) {
  auto n1 = detail::target_node(e1);
  auto n2 = detail::target_node(e2);
  auto n3 = detail::target_node(e3);
  detail::run_assignment(where, detail::Target<T1, decltype(n1)>{&out1, &n1},
                         detail::Target<T2, decltype(n2)>{&out2, &n2},
                         detail::Target<T3, decltype(n3)>{&out3, &n3});
}

template <typename T1, typename E1, typename T2, typename E2, typename T3, typename E3,
          typename T4, typename E4>
void assign(Array<T1>& out1, const E1& e1, Array<T2>& out2, const E2& e2, Array<T3>& out3,
            const E3& e3, Array<T4>& out4, const E4& e4,
            std::source_location where = std::source_location::current()) {
  auto n1 = detail::target_node(e1);
  auto n2 = detail::target_node(e2);
  auto n3 = detail::target_node(e3);
  auto n4 = detail::target_node(e4);
  detail::run_assignment(where, detail::Target<T1, decltype(n1)>{&out1, &n1},
                         detail::Target<T2, decltype(n2)>{&out2, &n2},
                         detail::Target<T3, decltype(n3)>{&out3, &n3},
                         detail::Target<T4, decltype(n4)>{&out4, &n4});
}

/// A new array holding `e`, of e's type and shape: `auto z = eval(x * y);`
template <ArrayExpr E>
auto eval(const E& e, std::source_location where = std::source_location::current()) {
  return Array<cpp_type_t<expr_dtype<E>>>(e, where);
}

/// The kernel `out = e` runs (its name, label, optimised IR and CUDA
/// source), built and cached but not run. Checks shapes like the assignment.
template <typename T, typename E>
KernelInfo inspect(Array<T>& out, const E& e,
                   std::source_location where = std::source_location::current()) {
  auto n = detail::target_node(e);
  return detail::inspect_assignment(where, detail::Target<T, decltype(n)>{&out, &n});
}

/// The kernel `assign(out1, e1, out2, e2)` runs, not run.
template <typename T1, typename E1, typename T2, typename E2>
KernelInfo inspect(Array<T1>& out1, const E1& e1, Array<T2>& out2, const E2& e2,
                   std::source_location where = std::source_location::current()) {
  auto n1 = detail::target_node(e1);
  auto n2 = detail::target_node(e2);
  return detail::inspect_assignment(where, detail::Target<T1, decltype(n1)>{&out1, &n1},
                                    detail::Target<T2, decltype(n2)>{&out2, &n2});
}

/// The CUDA source of the kernel `out = e` runs, not run.
template <typename T, typename E>
std::string source_of(Array<T>& out, const E& e,
                      std::source_location where = std::source_location::current()) {
  return inspect(out, e, where).source;
}

} // namespace gpukit
