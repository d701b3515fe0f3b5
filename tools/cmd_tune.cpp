// gpukit tune: autotunes a program's elementwise kernel at its bound size on
// the GPU (dsl/tune.hpp), stores the answer in the tuning database and prints
// the candidates table. Without a GPU it fails with Error{Unavailable}
// (exit 2) saying why.
#include "tools/cli.hpp"

#include "dsl/tune.hpp"

#include <llvm/Support/raw_ostream.h>

namespace gpukit::cli {

int run_tune() {
  text::ParsedProgram parsed = load_program();
  text::LoweredProgram lowered = text::lower(parsed, lower_options());
  print_warnings(lowered);
  uint64_t n = static_cast<uint64_t>(lowered.elements());
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
