// What dump, run and bench share: reading the program and turning the
// command line's bindings into LowerOptions.
#include "tools/cli.hpp"

#include "dsl/text/npy.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <charconv>

namespace gpukit::cli {

text::ParsedProgram load_program() {
  if (!ProgramText.empty() && !ProgramFile.empty())
    throw Error(ErrorKind::Usage,
                fmt::format("give a program file or -e PROGRAM, not both ('{}' and -e)", ProgramFile.getValue()));
  if (!ProgramText.empty())
    return text::parse_program(ProgramText, "-e");
  if (ProgramFile.empty())
    throw Error(ErrorKind::Usage, "no program: give a .gk file (or - for stdin) or -e 'out = 2*x + 1'");
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(ProgramFile, /*IsText=*/true);
  if (!buffer)
    throw Error(ErrorKind::Usage,
                fmt::format("cannot read {}: {}", ProgramFile.getValue(), buffer.getError().message()));
  std::string name = ProgramFile == "-" ? "<stdin>" : ProgramFile.getValue();
  return text::parse_program((*buffer)->getBuffer().str(), name);
}

std::pair<std::string, std::string> split_binding(const std::string& text, std::string_view flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(ErrorKind::Usage,
                fmt::format("--{} {}: expected NAME=VALUE, e.g. --{} N=1000", flag, text, flag));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

text::LowerOptions lower_options(std::map<std::string, InputFile>* arrays) {
  text::LowerOptions opts;
  for (const std::string& s : Sizes) {
    auto [name, value] = split_binding(s, "size");
    int64_t n = -1;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || ptr != value.data() + value.size() || n < 0)
      throw Error(ErrorKind::Usage,
                  fmt::format("--size {}: '{}' is not a non-negative integer", s, value));
    if (!opts.sizes.emplace(name, n).second)
      throw Error(ErrorKind::Usage, fmt::format("--size {} is given twice", name));
  }
  for (const std::string& s : ScalarValues) {
    auto [name, value] = split_binding(s, "scalar");
    if (!opts.scalars.emplace(name, value).second)
      throw Error(ErrorKind::Usage, fmt::format("--scalar {} is given twice", name));
  }
  for (const std::string& s : InputFiles) {
    auto [name, path] = split_binding(s, "input");
    InputFile file{path, text::read_npy(path)};
    text::ArraySpec spec{file.array.dtype, file.array.shape, path};
    if (!opts.inputs.emplace(name, spec).second)
      throw Error(ErrorKind::Usage, fmt::format("--input {} is given twice", name));
    if (arrays)
      arrays->emplace(name, std::move(file));
  }
  return opts;
}

std::string backend_description() {
  rt::Runtime& runtime = rt::Runtime::get();
  if (runtime.on_gpu())
    return runtime.device()->name;
  std::string_view reason = runtime.fallback_reason();
  reason = reason.substr(0, reason.find(" ("));
  return fmt::format("the CPU fallback ({})", reason);
}

void print_warnings(const text::LoweredProgram& lowered) {
  for (const std::string& w : lowered.warnings)
    llvm::errs() << "warning: " << w << "\n";
}

} // namespace gpukit::cli
