// SourceWriter: builds indented source text line by line (as VexCL's
// generator does), so emitters never count spaces.
//
//   SourceWriter w;
//   w.open("for (int k = 0; k < 4; ++k) {");
//   w.line("out[k] = {} * x[k];", scale);   // fmt::format syntax
//   w.close("}");
//
// Each level indents two spaces. Lines starting with '#' (pragmas) are
// indented like code, which CUDA accepts.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace gpukit::codegen {

class SourceWriter {
public:
  /// Appends one line at the current indentation (an empty line stays empty).
  void line(std::string_view text);
  template <typename... Args> void line(fmt::format_string<Args...> format, Args&&... args) {
    line(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
  }

  /// Appends `text` (e.g. "for (...) {") and indents what follows.
  void open(std::string_view text);
  template <typename... Args> void open(fmt::format_string<Args...> format, Args&&... args) {
    open(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
  }

  /// Unindents and appends `text` (e.g. "}").
  void close(std::string_view text = "}");

  /// Ends one block and opens the next on the same line: "} else {".
  void reopen(std::string_view text);

  /// Appends text that may span several lines, each at the current indentation.
  void lines(std::string_view text);

  int depth() const { return Depth; }
  const std::string& str() const { return Text; }
  std::string take() { return std::move(Text); }

private:
  std::string Text;
  int Depth = 0;
};

} // namespace gpukit::codegen
