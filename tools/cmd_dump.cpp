// gpukit dump: the CUDA source of a program (and its IR or PTX on request):
// its elementwise kernel, then per statement with reductions the plan and
// every kernel.
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
  // Reductions' kernels for unbound sizes: a Row kernel's row length is
  // compiled in, so the one shown is for this length.
  const int64_t assumed = 1024;
  text::CompiledProgram compiled =
      text::compile_program(lowered, {.vectorize = true, .index64 = index64, .unbound_extent = assumed});
  llvm::raw_ostream& os = llvm::outs();
  // The elementwise kernel, then each statement with reductions: its plan
  // and its kernels.
  std::vector<std::pair<std::string, std::string>> kernels; // name, source (for --ptx)
  bool first = true;
  if (compiled.has_elementwise) {
    if (ShowIr)
      os << ir::print(compiled.optimized) << "\n";
    os << compiled.cuda.source;
    kernels.push_back({compiled.cuda.name, compiled.cuda.source});
    first = false;
  }
  for (const text::CompiledStatement& c : compiled.reductions) {
    for (const std::string& size : c.assumed_sizes)
      llvm::errs() << fmt::format("note: {}: size {} is not bound; the row kernel is shown for {} = {} "
                                  "(its row length is compiled in: bind it with --size {}=...)\n",
                                  lowered.reductions[c.index].what, size, size, assumed, size);
    os << (first ? "" : "\n") << text::describe_statement(c);
    for (const codegen::ReductionKernel& k : c.compiled->kernels.kernels)
      kernels.push_back({k.cuda.name, k.cuda.source});
    first = false;
  }
  if (!ShowPtx)
    return 0;
  const rt::NvrtcApi* nvrtc = rt::NvrtcApi::load();
  if (!nvrtc)
    throw Error(ErrorKind::Unavailable,
                fmt::format("--ptx needs NVRTC, which could not be loaded: {}", rt::NvrtcApi::load_error()));
  rt::NvrtcCompiler compiler(*nvrtc);
  for (const auto& [name, source] : kernels)
    os << "\n" << compiler.ptx(name, source, Arch);
  return 0;
}

} // namespace gpukit::cli
