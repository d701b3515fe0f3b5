#include "dsl/operand_layout.hpp"

#include "codegen/kernel_names.hpp"
#include "dsl/array_base.hpp"
#include "dsl/expression_kernel.hpp"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <source_location>

namespace gpukit::detail {

namespace {

/// "examples/saxpy.cpp:18": the last two components of the path; "" for a
/// default-constructed location (line 0).
std::string format_location(const std::source_location& where) {
  if (where.line() == 0)
    return "";
  llvm::StringRef path(where.file_name());
  size_t last = path.rfind('/');
  if (last != llvm::StringRef::npos && last > 0) {
    size_t before = path.rfind('/', last - 1);
    if (before != llvm::StringRef::npos)
      path = path.drop_front(before + 1);
  }
  return fmt::format("{}:{}", path.str(), where.line());
}

} // namespace

OperandLayout make_layout(const AssignmentCall& call) {
  OperandLayout layout;
  size_t num_outputs = call.outputs.size();
  for (size_t k = 0; k < num_outputs; ++k) {
    const std::string& name = call.outputs[k]->name();
    layout.output_names.push_back(!name.empty() ? name
                                  : num_outputs == 1 ? std::string("out")
                                                     : fmt::format("out{}", k));
  }

  for (size_t k = 0; k < call.leaves.size(); ++k) {
    const ArrayBase* leaf = call.leaves[k];
    uint64_t address = leaf->address();
    // Leaves that are one view (x + x, or a share()) read one input; two
    // different views of one buffer (x + x.transpose()) are two inputs.
    std::optional<size_t> same;
    for (size_t j = 0; j < k && address != 0 && !same; ++j)
      if (call.leaves[j]->same_view_as(*leaf))
        same = j;
    if (same) {
      layout.leaf_input.push_back(layout.leaf_input[*same]);
      layout.leaf_names.push_back(layout.leaf_names[*same]);
      continue;
    }
    size_t input = layout.input_leaf.size();
    std::string name = leaf->name();
    for (size_t o = 0; o < num_outputs && name.empty() && address != 0; ++o)
      if (call.outputs[o]->address() == address)
        name = layout.output_names[o]; // `out = out + 1`
    if (name.empty())
      name = fmt::format("in{}", input);
    layout.leaf_input.push_back(static_cast<uint8_t>(input));
    layout.leaf_names.push_back(name);
    layout.input_leaf.push_back(static_cast<uint8_t>(k));
  }

  // Kernel parameter names: unique over outputs and inputs, and clear of
  // the words the emitted source uses.
  for (std::string& o : layout.output_names)
    if (codegen::has_reserved_prefix(o))
      o = "out" + o;
    else if (codegen::is_reserved_kernel_name(o))
      o += "_";
  auto taken = [&](const std::string& candidate) {
    return llvm::is_contained(layout.output_names, candidate) || llvm::is_contained(layout.input_names, candidate);
  };
  for (uint8_t leaf : layout.input_leaf)
    layout.input_names.push_back(codegen::free_kernel_name(layout.leaf_names[leaf], "in_", "_in", taken));
  return layout;
}

/// `out = 2 * x + sin(y)`, or `call = ...; put = ...` for several outputs.
std::string expression_text(const AssignmentType& type, const AssignmentCall& call,
                            const OperandLayout& layout) {
  ExprPrinter printer(layout.leaf_names, call.scalars);
  for (unsigned k = 0; k < type.num_outputs; ++k) {
    if (k)
      printer.text("; ");
    printer.text(layout.output_names[k]);
    printer.text(" = ");
    type.print(printer, k);
  }
  return printer.take();
}

std::string make_label(const AssignmentType& type, const AssignmentCall& call,
                       const OperandLayout& layout) {
  std::string text = expression_text(type, call, layout);
  if (!call.where || call.where->line() == 0)
    return text;
  return fmt::format("{}  ({})", text, format_location(*call.where));
}

/// "`out = x + y` at examples/saxpy.cpp:18" for messages.
std::string describe(const AssignmentType& type, const AssignmentCall& call) {
  OperandLayout layout = make_layout(call);
  std::string text = fmt::format("`{}`", expression_text(type, call, layout));
  if (call.where && call.where->line() != 0)
    text += fmt::format(" at {}", format_location(*call.where));
  return text;
}


} // namespace gpukit::detail
