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

#include <utility>

namespace gpukit::detail {

class IrBuilder {
public:
  IrBuilder(ir::Program& program, const OperandLayout& layout)
      : Program(program), Layout(layout), InputNodes(layout.input_leaf.size(), kNone) {}

  /// The next array leaf (traversal order).
  ir::NodeId array_leaf(DType type);
  /// The next scalar leaf: a weak scalar parameter "s<k>" of its kind's default type.
  ir::NodeId scalar_leaf(ScalarKind kind);
  /// An operation the C++ front end typed `expected`; weak results (made of
  /// scalars only) take their type from their use, so they are not checked.
  ir::NodeId op(ir::Op op, llvm::ArrayRef<ir::NodeId> args, DType expected, bool weak);
  ir::NodeId cast(DType to, ir::NodeId value);
  ir::NodeId call(const ir::UserFunction& fn, llvm::ArrayRef<ir::NodeId> args);
  /// The next output, storing `value` (C++-side type `expected`) as `type`.
  void output(DType type, ir::NodeId value, DType expected, bool weak);

  /// The strong operation nodes with the type the C++ front end computed for them.
  llvm::ArrayRef<std::pair<ir::NodeId, DType>> expectations() const { return Expected; }

private:
  static constexpr ir::NodeId kNone = ~ir::NodeId(0);

  ir::Program& Program;
  const OperandLayout& Layout;
  llvm::SmallVector<ir::NodeId, 8> InputNodes;
  unsigned NextLeaf = 0;
  unsigned NextScalar = 0;
  unsigned NextOutput = 0;
  llvm::SmallVector<std::pair<ir::NodeId, DType>, 16> Expected;
};

} // namespace gpukit::detail
