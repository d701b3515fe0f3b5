// GPUkit reports every failure by throwing gpukit::Error, whose kind() names
// the cause and whose what() is the full, user-facing message.
//
//   try { out = x + y; }
//   catch (const gpukit::Error& e) { if (e.kind() == gpukit::ErrorKind::Shape) ... }
//
// This is the one error mechanism of the project (chosen over llvm::Expected
// because `out = expr;` has no return value to carry one). LLVM calls that
// return llvm::Error are converted at the call site with throw_if_error().
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace llvm {
class Error;
}

namespace gpukit {

/// What went wrong, coarse enough for a program to branch on.
enum class ErrorKind {
  Usage,          ///< bad argument or API misuse (a user error)
  Shape,          ///< shapes that do not match or broadcast
  Type,           ///< dtypes that cannot be combined
  Parse,          ///< text front end: syntax or name errors
  Compile,        ///< NVRTC rejected generated or user CUDA source
  Driver,         ///< a CUDA driver call failed
  Unavailable,    ///< a needed component (driver, NVRTC, GPU) is absent
  OutOfMemory,    ///< an allocation could not be satisfied
  Io,             ///< file system or file-format failure
  Internal,       ///< a GPUkit bug: an invariant did not hold
};

std::string_view to_string(ErrorKind kind);

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), Kind(kind) {}

  ErrorKind kind() const { return Kind; }

private:
  ErrorKind Kind;
};

/// Throws gpukit::Error{kind, message} if `err` holds a failure; consumes it.
void throw_if_error(llvm::Error err, ErrorKind kind, std::string_view context);

} // namespace gpukit
