#include "codegen/source_writer.hpp"

#include "support/error.hpp"

namespace gpukit::codegen {

void SourceWriter::line(std::string_view text) {
  if (!text.empty())
    Text.append(static_cast<size_t>(Depth) * 2, ' ');
  Text.append(text);
  Text.push_back('\n');
}

void SourceWriter::open(std::string_view text) {
  line(text);
  ++Depth;
}

void SourceWriter::close(std::string_view text) {
  if (Depth == 0)
    throw Error(ErrorKind::Internal, "SourceWriter: close() without a matching open()");
  --Depth;
  line(text);
}

void SourceWriter::reopen(std::string_view text) {
  close(text);
  ++Depth;
}

void SourceWriter::lines(std::string_view text) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    line(text.substr(0, end));
    if (end == std::string_view::npos)
      break;
    text.remove_prefix(end + 1);
  }
}

} // namespace gpukit::codegen
