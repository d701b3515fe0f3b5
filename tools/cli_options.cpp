// Every subcommand and option of the gpukit tool, in one translation unit so
// that each option is constructed after the subcommands it belongs to.
#include "tools/cli.hpp"

namespace gpukit::cli {

namespace cl = llvm::cl;

cl::SubCommand DumpCommand("dump", "Print the CUDA source of a program (no GPU needed)");
cl::SubCommand RunCommand("run", "Run a program on the GPU or the CPU fallback and summarise its outputs");
cl::SubCommand BenchCommand("bench", "Time a program: median over repetitions, GB/s and % of copy bandwidth");
cl::SubCommand InfoCommand("info", "Show the driver, NVRTC, devices and the kernel cache");
cl::SubCommand CacheCommand("cache", "Inspect or clear the kernel cache: gpukit cache list|stats|clear");
cl::SubCommand DemoCommand("demo", "Price options with Black-Scholes through the C++ DSL and check the result");
cl::SubCommand TuneCommand("tune", "Autotune a program's kernel on the GPU and store the answer "
                                   "(gpukit tune FILE --size N=...)");

static cl::OptionCategory ProgramCategory("Program options");

cl::opt<std::string> ProgramFile(cl::Positional, cl::desc("<program.gk | ->"), cl::init(""),
                                 cl::sub(DumpCommand), cl::sub(RunCommand), cl::sub(BenchCommand),
                                 cl::sub(TuneCommand),
                                 cl::cat(ProgramCategory));
cl::opt<std::string> ProgramText("e", cl::desc("The program's text, instead of a file"),
                                 cl::value_desc("program"), cl::sub(DumpCommand), cl::sub(RunCommand),
                                 cl::sub(BenchCommand), cl::sub(TuneCommand), cl::cat(ProgramCategory));
cl::list<std::string> Sizes("size", cl::desc("Bind a size: --size N=1000000 (repeatable, or N=4,M=8)"),
                            cl::value_desc("NAME=VALUE"), cl::CommaSeparated, cl::sub(DumpCommand),
                            cl::sub(RunCommand), cl::sub(BenchCommand), cl::sub(TuneCommand),
                            cl::cat(ProgramCategory));
cl::list<std::string> ScalarValues("scalar", cl::desc("Give a scalar its value: --scalar r=0.02"),
                                   cl::value_desc("NAME=VALUE"), cl::CommaSeparated,
                                   cl::sub(DumpCommand), cl::sub(RunCommand), cl::sub(BenchCommand),
                                   cl::sub(TuneCommand),
                                   cl::cat(ProgramCategory));
cl::list<std::string> InputFiles("input", cl::desc("Read an input from a NumPy file: --input x=x.npy"),
                                 cl::value_desc("NAME=FILE.npy"), cl::sub(RunCommand),
                                 cl::sub(BenchCommand), cl::cat(ProgramCategory));
cl::list<std::string> SaveFiles("save", cl::desc("Write an output to a NumPy file: --save out=out.npy"),
                                cl::value_desc("NAME=FILE.npy"), cl::sub(RunCommand),
                                cl::cat(ProgramCategory));
cl::opt<uint64_t> Seed("seed", cl::desc("Seed of the random inputs (input k uses seed + k)"),
                       cl::init(1), cl::sub(RunCommand), cl::sub(BenchCommand),
                       cl::cat(ProgramCategory));
cl::opt<unsigned> Repetitions("reps", cl::desc("Timed repetitions"), cl::init(20),
                              cl::sub(BenchCommand), cl::cat(ProgramCategory));
cl::opt<std::string> Arch("arch", cl::desc("GPU architecture for --ptx"), cl::init("sm_90"),
                          cl::value_desc("sm_XY"), cl::sub(DumpCommand), cl::cat(ProgramCategory));
cl::opt<bool> ShowIr("ir", cl::desc("Also print the optimised IR"), cl::sub(DumpCommand),
                     cl::cat(ProgramCategory));
cl::opt<bool> ShowPtx("ptx", cl::desc("Also print the PTX (needs NVRTC)"), cl::sub(DumpCommand),
                      cl::cat(ProgramCategory));
cl::opt<bool> Explain("explain",
                      cl::desc("Say how the kernel is launched (block, items per thread, grid) and why: "
                               "a tuned entry or the heuristic"),
                      cl::sub(RunCommand), cl::sub(BenchCommand));
cl::opt<bool> Dump("dump", cl::desc("Print each generated kernel's CUDA source first"),
                   cl::sub(*cl::AllSubCommands));
cl::opt<bool> Verbose("verbose", cl::desc("Show the backend, compile times and cache hits"),
                      cl::sub(*cl::AllSubCommands));
cl::opt<bool> Stats("sched-stats",
                    cl::desc("At the end, print the scheduler's statistics: launches, bytes, GPU "
                             "time, wait and run times per task and class of service"),
                    cl::sub(*cl::AllSubCommands));
cl::opt<std::string> CacheAction(cl::Positional, cl::desc("<list | stats | clear>"), cl::init("stats"),
                                 cl::sub(CacheCommand));

} // namespace gpukit::cli
