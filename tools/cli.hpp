// The gpukit command-line tool: its subcommands and options (defined in
// cli_options.cpp, one translation unit, so they are constructed in order)
// and the helpers the subcommands share.
//
//   gpukit dump -e 'out = 2*x + sin(y)'          # the CUDA, no GPU needed
//   gpukit run examples/saxpy.gk --size N=1000000 --explain
//   gpukit tune examples/saxpy.gk --size N=16777216   # needs a GPU
//
// Exit codes: 0 success, 1 a user error (a bad program, bad arguments or
// files), 2 a runtime or GPU error.
#pragma once

#include "dsl/text/host_array.hpp"
#include "dsl/text/lower.hpp"
#include "dsl/text/parser.hpp"

#include <llvm/Support/CommandLine.h>

#include <map>
#include <string>

namespace gpukit::cli {

extern llvm::cl::SubCommand DumpCommand, RunCommand, BenchCommand, InfoCommand, CacheCommand,
    DemoCommand, TuneCommand;

extern llvm::cl::opt<std::string> ProgramFile;
extern llvm::cl::opt<std::string> ProgramText;
extern llvm::cl::list<std::string> Sizes;
extern llvm::cl::list<std::string> ScalarValues;
extern llvm::cl::list<std::string> InputFiles;
extern llvm::cl::list<std::string> SaveFiles;
extern llvm::cl::opt<uint64_t> Seed;
extern llvm::cl::opt<unsigned> Repetitions;
extern llvm::cl::opt<std::string> Arch;
extern llvm::cl::opt<bool> ShowIr;
extern llvm::cl::opt<bool> ShowPtx;
extern llvm::cl::opt<bool> Explain;
extern llvm::cl::opt<bool> Dump;
extern llvm::cl::opt<bool> Verbose;
extern llvm::cl::opt<bool> Stats;
extern llvm::cl::opt<std::string> CacheAction;

/// An --input file, read.
struct InputFile {
  std::string path;
  text::HostArray array;
};

/// A program from FILE (or `-` for stdin) or -e TEXT, parsed.
text::ParsedProgram load_program();

/// --size, --scalar and --input as LowerOptions (reads the --input files'
/// headers and data into `arrays`, keyed by input name).
text::LowerOptions lower_options(std::map<std::string, InputFile>* arrays = nullptr);

/// "NAME=VALUE" split at the first '='; Error{Usage} naming `flag` otherwise.
std::pair<std::string, std::string> split_binding(const std::string& text, std::string_view flag);

/// Where kernels run, for one-line reports: the GPU's name, or "the CPU
/// fallback (CUDA driver not detected)" without the loader's details.
std::string backend_description();

/// Prints the lowering's warnings to stderr.
void print_warnings(const text::LoweredProgram& lowered);

int run_dump();
int run_run();
int run_bench();
int run_info();
int run_cache();
int run_demo();
int run_tune();

} // namespace gpukit::cli
