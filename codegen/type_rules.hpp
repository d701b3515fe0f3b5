// The typing rules of front ends, as constexpr functions: the type of an
// operation from its operands' types, where an operand made only of C++
// scalars or literals is *weak* (NEP 50). The C++ DSL evaluates them at
// compile time, the text front end at run time, and the IR's infer_types
// pass agrees with both (tests check it).
//
//   constexpr ExprType t = apply_rule(ir::Op::Sin, promote_all({{DType::Int32, false}}));
//   static_assert(t.dtype == DType::Float32);
//
// docs/TYPES.md states the rules in prose.
#pragma once

#include "codegen/dtype.hpp"
#include "codegen/ir.hpp"

#include <initializer_list>

namespace gpukit {

/// A value's type as a front end sees it: the DType, and whether it is weak.
struct ExprType {
  DType dtype;
  bool weak;
};

/// The type of an operation over operands `args`: array types promote among
/// themselves, then weak scalars join with promote_with_scalar (NEP 50);
/// all-weak operands stay weak.
constexpr ExprType promote_all(std::initializer_list<ExprType> args) {
  bool have_strong = false;
  bool have_weak = false;
  DType strong = DType::Bool;
  ScalarKind weak = ScalarKind::Bool;
  for (ExprType a : args) {
    if (a.weak) {
      weak = !have_weak || kind_of(a.dtype) > weak ? kind_of(a.dtype) : weak;
      have_weak = true;
    } else {
      strong = have_strong ? promote(strong, a.dtype) : a.dtype;
      have_strong = true;
    }
  }
  if (!have_strong)
    return {default_type(weak), true};
  return {have_weak ? promote_with_scalar(strong, weak) : strong, false};
}

/// What an operation gives, by the rules of docs/TYPES.md.
enum class ResultRule {
  Same,      ///< the promoted operand type (+, min, abs, floor, ...)
  Floating,  ///< float_type_for(promoted) (sin, sqrt, pow, ...)
  Predicate, ///< bool (comparisons, &&, ||, !)
};

/// ir::is_predicate and ir::is_transcendental as constexpr functions (a
/// test checks they agree with the IR's for every Op).
constexpr bool is_predicate_op(ir::Op op) {
  using enum ir::Op;
  return op == Lt || op == Le || op == Gt || op == Ge || op == Eq || op == Ne || op == And ||
         op == Or || op == Not;
}

constexpr bool is_transcendental_op(ir::Op op) {
  using enum ir::Op;
  return op == Sqrt || op == Rsqrt || op == Exp || op == Exp2 || op == Log || op == Log2 ||
         op == Log10 || op == Sin || op == Cos || op == Tan || op == Tanh || op == Sigmoid ||
         op == Erf || op == Pow;
}

constexpr ResultRule result_rule(ir::Op op) {
  if (is_predicate_op(op))
    return ResultRule::Predicate;
  return is_transcendental_op(op) ? ResultRule::Floating : ResultRule::Same;
}

/// The type of `op` applied to operands whose promoted type is `promoted`.
constexpr ExprType apply_rule(ir::Op op, ExprType promoted) {
  switch (result_rule(op)) {
  case ResultRule::Same: return promoted;
  case ResultRule::Floating: return {float_type_for(promoted.dtype), promoted.weak};
  case ResultRule::Predicate: return {DType::Bool, false};
  }
  return promoted;
}

} // namespace gpukit
