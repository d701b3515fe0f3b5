#include "dsl/ir_builder.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::detail {

ir::NodeId IrBuilder::array_leaf(DType type) {
  if (NextLeaf >= Layout.leaf_input.size())
    throw Error(ErrorKind::Internal, "IrBuilder: more array leaves than the layout has");
  unsigned input = Layout.leaf_input[NextLeaf++];
  if (InputNodes[input] == kNone)
    InputNodes[input] = Program.add_input(Layout.input_names[input], type);
  return InputNodes[input];
}

ir::NodeId IrBuilder::scalar_leaf(ScalarKind kind) {
  unsigned slot = NextScalar++;
  ir::NodeId id = slot < SameScalar.size() && SameScalar[slot] != slot
                      ? ScalarNodes[SameScalar[slot]]
                      : Program.add_scalar(fmt::format("s{}", slot), default_type(kind), /*weak=*/true);
  ScalarNodes.push_back(id);
  return id;
}

ir::NodeId IrBuilder::op(ir::Op op, llvm::ArrayRef<ir::NodeId> args, DType expected,
                         bool weak) {
  ir::NodeId id = Program.add(op, args);
  if (!weak)
    Expected.push_back({id, expected});
  return id;
}

ir::NodeId IrBuilder::cast(DType to, ir::NodeId value) {
  ir::NodeId id = Program.add_cast(to, value);
  Expected.push_back({id, to});
  return id;
}

ir::NodeId IrBuilder::call(const ir::UserFunction& fn, llvm::ArrayRef<ir::NodeId> args) {
  uint32_t index = Program.add_function(fn);
  ir::NodeId id = Program.add_call(index, args);
  Expected.push_back({id, fn.result});
  return id;
}

void IrBuilder::output(DType type, ir::NodeId value, DType expected, bool weak) {
  if (NextOutput >= Layout.output_names.size())
    throw Error(ErrorKind::Internal, "IrBuilder: more outputs than the layout has");
  ir::Op op = Program.node(value).op;
  if (!weak && op != ir::Op::Input && op != ir::Op::Scalar)
    Expected.push_back({value, expected});
  Program.add_output(Layout.output_names[NextOutput++], type, value);
}

} // namespace gpukit::detail
