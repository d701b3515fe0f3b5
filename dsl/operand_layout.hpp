// OperandLayout: how one assignment's arrays become kernel parameters and
// how they are named in kernels, labels and messages. Decided from the
// arrays of a call (never on the hot path: only when a kernel variant is
// built or a message is made).
//
//   OperandLayout layout = make_layout(call);
//   std::string text = expression_text(type, call, layout);   // "out = 2 * x + sin(y)"
//
// Leaves that are one view of one buffer (`x + x`, or an array and its share()) read one
// input; a leaf on an output's buffer takes the output's name (`out = out +
// 1`); unnamed arrays are in0, in1, ... and outputs out (or out0, out1, ...).
// Parameter names are unique and clear of the words the emitted CUDA uses.
#pragma once

#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <string>

namespace gpukit::detail {

struct AssignmentType;
struct AssignmentCall;

/// Names and aliasing of one assignment's array operands, decided from the
/// arrays before the program is built.
struct OperandLayout {
  llvm::SmallVector<std::string, 4> output_names;
  /// Per array leaf, in traversal order; leaves on one buffer share a name.
  llvm::SmallVector<std::string, 8> leaf_names;
  /// Per array leaf: the IR input that reads it (aliased leaves share one).
  llvm::SmallVector<uint8_t, 8> leaf_input;
  /// Per IR input: the first leaf that reads it.
  llvm::SmallVector<uint8_t, 8> input_leaf;
  /// Per IR input: its name in the kernel (unique among all parameters).
  llvm::SmallVector<std::string, 8> input_names;
};

/// The layout of `call`'s operands.
OperandLayout make_layout(const AssignmentCall& call);

/// `out = 2 * x + sin(y)`, or `call = ...; put = ...` for several outputs.
std::string expression_text(const AssignmentType& type, const AssignmentCall& call,
                            const OperandLayout& layout);

/// The kernel label: the text and where it was written,
/// "out = 2 * x + sin(y)  (examples/saxpy.cpp:18)".
std::string make_label(const AssignmentType& type, const AssignmentCall& call,
                       const OperandLayout& layout);

/// "`out = x + y` at examples/saxpy.cpp:18", for messages.
std::string describe(const AssignmentType& type, const AssignmentCall& call);

} // namespace gpukit::detail
