// ExprPrinter: turns an expression template back into the text the user
// wrote, for kernel labels and error messages: `out = 2 * x + sin(y)`.
//
//   detail::ExprPrinter p(leaf_names, scalar_values);
//   E::print(p);                  // each node type prints itself
//   std::string text = p.take();
//
// It inserts parentheses only where C++ precedence needs them. Scalars print
// with the value they had when the text was made.
#pragma once

#include "codegen/ir.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <string>
#include <string_view>

namespace gpukit::detail {

class ExprPrinter {
public:
  ExprPrinter(llvm::ArrayRef<std::string> leaf_names, llvm::ArrayRef<ir::Constant> scalars)
      : LeafNames(leaf_names), Scalars(scalars) {}

  void array_leaf();
  void scalar_leaf();
  /// `a op b` for the infix operators (+ - * / % comparisons && ||).
  void begin_infix(ir::Op op);
  void between_infix(ir::Op op);
  void end_infix();
  /// `-a` and `!a`.
  void begin_prefix(ir::Op op);
  void end_prefix();
  /// `name(a, b, ...)` for functions, casts and user device functions.
  void begin_call(std::string_view name);
  void next_argument();
  void end_call();
  /// Raw text, e.g. "out = " between outputs.
  void text(std::string_view s) { Out += s; }

  std::string take() { return std::move(Out); }

  /// The C++ spelling of an operator, or "" when `op` prints as a call.
  static std::string_view infix_spelling(ir::Op op);
  /// The DSL function an operation is written as: "sqrt", "where", "min".
  static std::string_view function_name(ir::Op op);
  /// The C++ element type of a DType as users write it: "float", "int32_t".
  static std::string_view cpp_name(DType type);

private:
  void open(int precedence);
  void close();

  llvm::ArrayRef<std::string> LeafNames;
  llvm::ArrayRef<ir::Constant> Scalars;
  unsigned NextLeaf = 0;
  unsigned NextScalar = 0;
  std::string Out;
  /// The lowest precedence the next node may have without parentheses.
  int Required = 0;
  struct Frame {
    bool parenthesised;
    int saved_required;
    int precedence;
  };
  llvm::SmallVector<Frame, 16> Frames;
};

/// A scalar as the user wrote it: 2, 0.5, true.
std::string format_scalar(const ir::Constant& value);

} // namespace gpukit::detail
