// gpukit dump: the CUDA source of a program (and its IR or PTX on request).
// Needs no GPU; --ptx needs NVRTC.
#include "tools/cli.hpp"

#include "codegen/ir_printer.hpp"
#include "dsl/text/program_runner.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/raw_ostream.h>

namespace gpukit::cli {

int run_dump() {
  text::ParsedProgram parsed = load_program();
  text::LoweredProgram lowered = text::lower(parsed, lower_options());
  print_warnings(lowered);
  // 64-bit indexing only when bound sizes say the arrays need it.
  bool all_bound = true;
  for (const auto& [name, value] : lowered.sizes)
    all_bound &= value >= 0;
  bool index64 = all_bound && codegen::needs_index64(static_cast<uint64_t>(lowered.elements()));
  text::CompiledProgram compiled = text::compile_program(lowered, {.vectorize = true, .index64 = index64});
  llvm::raw_ostream& os = llvm::outs();
  if (ShowIr)
    os << ir::print(compiled.optimized) << "\n";
  os << compiled.cuda.source;
  if (!ShowPtx)
    return 0;
  const rt::NvrtcApi* nvrtc = rt::NvrtcApi::load();
  if (!nvrtc)
    throw Error(ErrorKind::Unavailable,
                fmt::format("--ptx needs NVRTC, which could not be loaded: {}", rt::NvrtcApi::load_error()));
  rt::NvrtcCompiler compiler(*nvrtc);
  os << "\n" << compiler.ptx(compiled.cuda.name, compiled.cuda.source, Arch);
  return 0;
}

} // namespace gpukit::cli
