// gpukit: the command-line tool. Subcommands live in cmd_*.cpp, options in
// cli_options.cpp. Every failure is a gpukit::Error; its kind decides the
// exit code (1 for the user's mistakes, 2 for the machine's).
#include "tools/cli.hpp"

#include "runtime/runtime.hpp"
#include "runtime/scheduler/scheduling.hpp"

#include "support/error.hpp"

#include <llvm/Support/raw_ostream.h>

#include <exception>
#include <string_view>

namespace {

int exit_code(gpukit::ErrorKind kind) {
  using gpukit::ErrorKind;
  switch (kind) {
  case ErrorKind::Usage:
  case ErrorKind::Shape:
  case ErrorKind::Type:
  case ErrorKind::Parse:
  case ErrorKind::Io: return 1;
  case ErrorKind::Compile:
  case ErrorKind::Driver:
  case ErrorKind::Unavailable:
  case ErrorKind::OutOfMemory:
  case ErrorKind::Internal: return 2;
  }
  return 2;
}

int dispatch() {
  using namespace gpukit::cli;
  if (DumpCommand)
    return run_dump();
  if (RunCommand)
    return run_run();
  if (BenchCommand)
    return run_bench();
  if (InfoCommand)
    return run_info();
  if (CacheCommand)
    return run_cache();
  if (DemoCommand)
    return run_demo();
  if (TuneCommand)
    return run_tune();
  llvm::errs() << "gpukit: give a subcommand: dump, run, bench, tune, info, cache or demo "
                  "(gpukit --help lists them)\n";
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream& os) { os << "gpukit 0.1.0\n"; });
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "gpukit: generated CUDA kernels from array expressions\n\n"
          "  gpukit demo                              Black-Scholes through the C++ DSL\n"
          "  gpukit dump -e 'out = 2*x + sin(y)'      the CUDA for a program\n"
          "  gpukit run examples/saxpy.gk --size N=1000000\n",
          &llvm::errs()))
    return 1;
  try {
    int rc = dispatch();
    if (gpukit::cli::Stats) {
      gpukit::rt::sched::Scheduling& s = gpukit::rt::Runtime::get().scheduling();
      const gpukit::rt::sched::TaskCounters& d = s.dispatch().default_counters();
      llvm::outs() << "launches without a task: " << d.launches.load() << " kernels, "
                   << d.host_launches.load() << " on the CPU fallback\n";
      s.scheduler().print_stats(llvm::outs());
    }
    llvm::outs().flush();
    return rc;
  } catch (const gpukit::Error& e) {
    llvm::outs().flush();
    std::string_view message = e.what();
    // Text-program errors carry "file:line:col: error: "; others get the prefix here.
    if (message.substr(0, message.find('\n')).find(": error: ") == std::string_view::npos)
      llvm::errs() << "error: ";
    llvm::errs() << message << "\n";
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    llvm::outs().flush();
    llvm::errs() << "gpukit: internal error: " << e.what() << "\n";
    return 2;
  }
}
