// IrBuilder: what an expression template's nodes call to lower themselves to
// an ir::Program, once per kernel variant (never on the hot path).
//
//   detail::IrBuilder b(program, layout);
//   ir::NodeId v = E::build(b);          // each node type builds itself
//   b.output(DType::Float32, v, E::dtype);
//
// It numbers inputs and scalars in the order the leaves are met (the order
// the hot path collects them in), reuses one input for leaves that alias the
// same buffer, and records the type the C++ front end gave every node so the
// caller can check that the IR's type inference agrees.
#pragma once

#include "codegen/ir.hpp"
#include "dsl/operand_layout.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <cstring>
#include <utility>

namespace gpukit::detail {

/// Whether two C++ scalars of one assignment may be passed as ONE kernel
/// scalar, so that CSE merges the subexpressions built from them (`auto d1 =
/// ... v ...;` used twice gives two slots holding the same v): the same
/// recorded type and bit pattern, and floating or bool. Integers stay apart:
/// each integer slot is range-checked against the type of its own use
/// (Error{Type} for 300 used with a uint8 array), which one shared scalar,
/// typed by its widest use, would skip. The text front end applies the same
/// rule to its literals, so both build the same kernel.
inline bool shares_scalar_slot(const ir::Constant& a, const ir::Constant& b) {
  if (a.type != b.type || is_integer(a.type))
    return false;
  // Bits, not ==: NaN equals NaN and -0.0 differs from 0.0.
  uint64_t fa, fb;
  std::memcpy(&fa, &a.f, sizeof fa);
  std::memcpy(&fb, &b.f, sizeof fb);
  return fa == fb && a.i == b.i;
}

class IrBuilder {
public:
  /// `same_scalar`: per scalar slot, the first slot it shares a kernel
  /// scalar with (VariantKey::scalar_same); empty: every slot its own.
  IrBuilder(ir::Program& program, const OperandLayout& layout,
            llvm::ArrayRef<uint8_t> same_scalar = {})
      : Program(program), Layout(layout), InputNodes(layout.input_leaf.size(), kNone),
        SameScalar(same_scalar) {}

  /// The next array leaf (traversal order).
  ir::NodeId array_leaf(DType type);
  /// The next scalar leaf: a weak scalar parameter "s<k>" of its kind's
  /// default type, or the parameter of the first slot it shares one with.
  ir::NodeId scalar_leaf(ScalarKind kind);
  /// An operation the C++ front end typed `expected`; weak results (made of
  /// scalars only) take their type from their use, so they are not checked.
  ir::NodeId op(ir::Op op, llvm::ArrayRef<ir::NodeId> args, DType expected, bool weak);
  ir::NodeId cast(DType to, ir::NodeId value);
  ir::NodeId call(const ir::UserFunction& fn, llvm::ArrayRef<ir::NodeId> args);
  /// The next output, storing `value` (C++-side type `expected`) as `type`.
  void output(DType type, ir::NodeId value, DType expected, bool weak);

  /// Reductions (dsl/reduce.hpp): the program being built, and numbering
  /// that continues from a nested builder (a reduction's body is built into
  /// a program of its own, its leaves and scalars numbered in line).
  ir::Program& program() { return Program; }
  void continue_from(const IrBuilder& nested) {
    NextLeaf = nested.NextLeaf;
    NextScalar = nested.NextScalar;
  }
  /// Skips a collected scalar slot that is not a kernel argument (an axis).
  void skip_scalar() { ++NextScalar; }
  /// Set by the reduction engine while it builds a plan; null otherwise.
  void* reduction_context = nullptr;

  /// The strong operation nodes with the type the C++ front end computed for them.
  llvm::ArrayRef<std::pair<ir::NodeId, DType>> expectations() const { return Expected; }

private:
  static constexpr ir::NodeId kNone = ~ir::NodeId(0);

  ir::Program& Program;
  const OperandLayout& Layout;
  llvm::SmallVector<ir::NodeId, 8> InputNodes;
  llvm::ArrayRef<uint8_t> SameScalar;
  llvm::SmallVector<ir::NodeId, 8> ScalarNodes; ///< per slot met so far
  unsigned NextLeaf = 0;
  unsigned NextScalar = 0;
  unsigned NextOutput = 0;
  llvm::SmallVector<std::pair<ir::NodeId, DType>, 16> Expected;
};

} // namespace gpukit::detail
