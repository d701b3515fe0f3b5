#include "dsl/kernel_dump.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>

namespace gpukit::detail {

namespace {

void dump(std::string_view name, std::string_view extension, std::string_view text) {
  const char* setting = std::getenv("GPUKIT_DUMP");
  if (!setting || !*setting || std::string_view(setting) == "0")
    return;
  if (std::string_view(setting) == "1") {
    llvm::errs() << text;
    if (!text.ends_with('\n'))
      llvm::errs() << '\n';
    llvm::errs().flush();
    return;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(setting))
    throw Error(ErrorKind::Io, fmt::format("GPUKIT_DUMP: cannot create directory '{}': {}",
                                           setting, ec.message()));
  llvm::SmallString<256> path(setting);
  llvm::sys::path::append(path, fmt::format("{}.{}", name, extension));
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    throw Error(ErrorKind::Io, fmt::format("GPUKIT_DUMP: cannot write '{}': {}", path.str().str(),
                                           ec.message()));
  out << text;
}

} // namespace

void dump_kernel(std::string_view name, std::string_view source) { dump(name, "cu", source); }

void dump_plan(std::string_view name, std::string_view plan) {
  std::string text;
  for (size_t at = 0; at < plan.size();) {
    size_t end = plan.find('\n', at);
    std::string_view line = plan.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    text += fmt::format("// {}\n", line);
    at = end == std::string_view::npos ? plan.size() : end + 1;
  }
  dump(name, "plan", text);
}

} // namespace gpukit::detail
