// SourceFile: a text program and its name, and the one way the text front
// end reports a problem in it: `file:line:col: error: message`, the line,
// and a caret under the column (clang's layout).
//
//   SourceFile src{"saxpy.gk", text};
//   src.fail(ErrorKind::Parse, offset, "expected an expression");  // throws
//
// Offsets are byte offsets into the text; columns count bytes from 1, and
// tabs in the quoted line are kept so the caret lines up in a terminal.
#pragma once

#include "support/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gpukit::text {

/// A byte offset into a program's text; the parser stores one in every node.
using Offset = uint32_t;

struct LineColumn {
  unsigned line = 1;
  unsigned column = 1;
};

class SourceFile {
public:
  SourceFile() = default;
  SourceFile(std::string filename, std::string text)
      : Filename(std::move(filename)), Text(std::move(text)) {}

  const std::string& filename() const { return Filename; }
  const std::string& text() const { return Text; }

  LineColumn locate(Offset offset) const;
  /// The line holding `offset`, without its newline.
  std::string_view line_at(Offset offset) const;

  /// "file:line:col: error: message\n<line>\n<caret>" plus "note: ..." lines
  /// when `note` is not empty.
  std::string render(Offset offset, std::string_view message, std::string_view note = {}) const;

  /// Throws gpukit::Error{kind, render(offset, message, note)}.
  [[noreturn]] void fail(ErrorKind kind, Offset offset, std::string_view message,
                         std::string_view note = {}) const;

private:
  std::string Filename;
  std::string Text;
};

} // namespace gpukit::text
