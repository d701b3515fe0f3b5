// gpukit tune: autotunes a program's elementwise kernel at its bound size on
// the GPU (dsl/tune.hpp), stores the answer in the tuning database and prints
// the candidates table. Without a GPU it fails with Error{Unavailable}
// (exit 2) saying why; a program whose every statement reduces has nothing
// to tune (Error{Usage}, exit 1).
#include "tools/cli.hpp"

#include "dsl/tune.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <llvm/Support/raw_ostream.h>

namespace gpukit::cli {

int run_tune() {
  text::ParsedProgram parsed = load_program();
  text::LoweredProgram lowered = text::lower(parsed, lower_options());
  print_warnings(lowered);
  uint64_t n = static_cast<uint64_t>(lowered.elements());
  // Reductions pick their launch from the geometry; only the elementwise
  // kernel has configurations to measure.
  if (!lowered.reductions.empty()) {
    if (lowered.program.outputs().empty())
      throw Error(ErrorKind::Usage,
                  fmt::format("tune measures elementwise kernels, and every statement of this program "
                              "reduces ({} first); reduction kernels choose their launch from the shape",
                              lowered.reductions.front().what));
    llvm::errs() << fmt::format("note: tuning the elementwise kernel only; the {} statement{} with "
                                "reductions keep{} the engine's launch\n",
                                lowered.reductions.size(), lowered.reductions.size() == 1 ? "" : "s",
                                lowered.reductions.size() == 1 ? "s" : "");
  }
  TuneOptions options;
  // Scalars without a value get the tuner's defaults.
  for (size_t k = 0; k < lowered.scalar_values.size(); ++k)
    if (lowered.scalar_values[k])
      options.scalars[lowered.program.scalars()[k].name] = *lowered.scalar_values[k];
  TuneReport report = tune_program(lowered.program, n, options);
  llvm::outs() << format_tune_table(report);
  return 0;
}

} // namespace gpukit::cli
