#include "dsl/text/source.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::text {

LineColumn SourceFile::locate(Offset offset) const {
  size_t end = std::min<size_t>(offset, Text.size());
  LineColumn lc;
  size_t line_start = 0;
  for (size_t k = 0; k < end; ++k) {
    if (Text[k] == '\n') {
      ++lc.line;
      line_start = k + 1;
    }
  }
  lc.column = static_cast<unsigned>(end - line_start + 1);
  return lc;
}

std::string_view SourceFile::line_at(Offset offset) const {
  size_t pos = std::min<size_t>(offset, Text.size());
  size_t begin = 0;
  if (pos > 0) {
    size_t nl = Text.rfind('\n', pos - 1);
    begin = nl == std::string::npos ? 0 : nl + 1;
  }
  size_t end = Text.find('\n', begin);
  if (end == std::string::npos)
    end = Text.size();
  std::string_view line(Text.data() + begin, end - begin);
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  return line;
}

std::string SourceFile::render(Offset offset, std::string_view message,
                               std::string_view note) const {
  LineColumn lc = locate(offset);
  std::string_view line = line_at(offset);
  // The caret line copies tabs so it lines up under the quoted line.
  std::string caret;
  for (size_t k = 0; k + 1 < lc.column && k < line.size(); ++k)
    caret += line[k] == '\t' ? '\t' : ' ';
  caret += '^';
  std::string out = fmt::format("{}:{}:{}: error: {}\n  {}\n  {}", Filename, lc.line, lc.column,
                                message, line, caret);
  if (!note.empty())
    out += fmt::format("\nnote: {}", note);
  return out;
}

void SourceFile::fail(ErrorKind kind, Offset offset, std::string_view message,
                      std::string_view note) const {
  throw Error(kind, render(offset, message, note));
}

} // namespace gpukit::text
