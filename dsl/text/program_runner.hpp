// Running a lowered text program: the optimised IR and its CUDA kernel
// (compile_program), and a ProgramRunner that holds the device buffers and
// launches it on the GPU, or evaluates it on the CPU fallback.
//
//   CompiledProgram cp = compile_program(lowered, {.index64 = n >= (1u << 31)});
//   fmt::print("{}", cp.cuda.source);                   // what `gpukit dump` prints
//   ProgramRunner runner(cp, lowered, n);
//   runner.upload(inputs);  runner.launch();  runner.download(outputs);
//
// The kernel is the one the C++ DSL builds for the same expression: the same
// passes (ir::optimize) and back end (codegen::emit_cuda), the same
// parameter order and the same scalar conversions.
#pragma once

#include "codegen/cuda_emitter.hpp"
#include "codegen/strided_layout.hpp"
#include "dsl/tuned_launch.hpp"
#include "dsl/text/host_array.hpp"
#include "dsl/text/lower.hpp"
#include "runtime/allocator.hpp"

#include <llvm/ADT/ArrayRef.h>

#include <cstddef>
#include <vector>

namespace gpukit::rt {
struct Kernel;
}

namespace gpukit::text {

struct CompileOptions {
  bool vectorize = true;
  bool index64 = false;
  /// Elements, to look up a tuned launch configuration (tuned_launch).
  uint64_t n = 0;
};

struct CompiledProgram {
  ir::Program optimized;
  codegen::EmitOptions options;
  /// The launch configuration and where it came from (for --explain).
  TunedLaunch launch;
  codegen::CudaKernel cuda;
  /// Per input of `optimized`: its index in LoweredProgram::inputs (an input
  /// the passes found unused is not a parameter).
  std::vector<size_t> input_index;
  /// Per scalar of `optimized`: its index in LoweredProgram::scalar_values.
  std::vector<size_t> scalar_index;
  /// Set when an input broadcasts (NumPy rules) to the outputs' shape: the
  /// kernel is the strided engine's (codegen/cuda_strided_emitter.hpp) and
  /// these are its extents and strides (unbound sizes count as 2).
  std::optional<codegen::StridedArgs> strided;
};

/// Optimises and emits; needs neither a GPU nor NVRTC.
CompiledProgram compile_program(const LoweredProgram& lowered, const CompileOptions& options = {});

/// One program's buffers and kernel on the runtime's backend.
class ProgramRunner {
public:
  /// Compiles and loads the kernel on the GPU (through the kernel cache); on
  /// the CPU fallback nothing is compiled. Checks every scalar has a value
  /// that fits the type it is passed as.
  ProgramRunner(const CompiledProgram& compiled, const LoweredProgram& lowered, size_t n);
  ~ProgramRunner();
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  /// Copies `inputs` (one per LoweredProgram::inputs, n elements each) in.
  void upload(llvm::ArrayRef<HostArray> inputs);
  /// Runs the kernel once; on the GPU it is only enqueued.
  void launch();
  /// Waits for the work, then copies every output out (one per LoweredProgram::outputs).
  void download(std::vector<HostArray>& outputs);

  /// The loaded kernel (GPU), nullptr on the CPU fallback.
  const rt::Kernel* kernel() const { return Kernel; }
  /// Bytes one launch reads and writes (inputs it reads, outputs).
  size_t bytes_per_launch() const;

private:
  const CompiledProgram& Compiled;
  const LoweredProgram& Lowered;
  size_t N;
  bool OnGpu;
  const rt::Kernel* Kernel = nullptr;
  std::vector<ir::Constant> Scalars; ///< per optimized scalar, of its type
  std::vector<rt::Allocation> Inputs, Outputs;
};

} // namespace gpukit::text
