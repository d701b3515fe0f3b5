#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/Error.h>

namespace gpukit {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::Usage: return "usage";
  case ErrorKind::Shape: return "shape";
  case ErrorKind::Type: return "type";
  case ErrorKind::Parse: return "parse";
  case ErrorKind::Compile: return "compile";
  case ErrorKind::Driver: return "driver";
  case ErrorKind::Unavailable: return "unavailable";
  case ErrorKind::OutOfMemory: return "out of memory";
  case ErrorKind::Io: return "io";
  case ErrorKind::Internal: return "internal";
  }
  return "unknown";
}

void throw_if_error(llvm::Error err, ErrorKind kind, std::string_view context) {
  if (!err)
    return;
  std::string message = llvm::toString(std::move(err));
  throw Error(kind, fmt::format("{}: {}", context, message));
}

} // namespace gpukit
