// Running a lowered text program: the optimised IR and its CUDA kernel
// (compile_program), the kernels of its statements with reductions
// (dsl/text/reduction_statement.hpp), and a ProgramRunner that holds the
// device buffers and launches them all on the GPU, or evaluates them on the
// CPU fallback.
//
//   CompiledProgram cp = compile_program(lowered, {.index64 = n >= (1u << 31)});
//   fmt::print("{}", cp.cuda.source);                   // what `gpukit dump` prints
//   ProgramRunner runner(cp, lowered, n);
//   runner.upload(inputs);  runner.launch();  runner.download(outputs);
//
// The kernel is the one the C++ DSL builds for the same expression: the same
// passes (ir::optimize) and back end (codegen::emit_cuda), the same
// parameter order and the same scalar conversions; a statement with
// reductions is the DSL's ir::ReductionPlan, run by the DSL's engine.
#pragma once

#include "codegen/cuda_emitter.hpp"
#include "codegen/strided_layout.hpp"
#include "dsl/tuned_launch.hpp"
#include "dsl/text/host_array.hpp"
#include "dsl/text/lower.hpp"
#include "dsl/text/reduction_statement.hpp"
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
  /// The extent unbound sizes are taken to have for the reductions' kernels
  /// (see StatementCompileOptions).
  int64_t unbound_extent = 1024;
};

struct CompiledProgram {
  /// Whether the program has an elementwise kernel (a statement without a
  /// reduction); the members up to `strided` describe it.
  bool has_elementwise = false;
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
  /// Per LoweredProgram::reductions: its kernels' source (not loaded).
  std::vector<CompiledStatement> reductions;
};

/// Optimises and emits; needs neither a GPU nor NVRTC.
CompiledProgram compile_program(const LoweredProgram& lowered, const CompileOptions& options = {});

/// One program's buffers and kernel on the runtime's backend.
class ProgramRunner {
public:
  /// Compiles and loads the kernels on the GPU (through the kernel cache); on
  /// the CPU fallback nothing is compiled. Checks every scalar has a value
  /// that fits the type it is passed as. `n`: the elementwise kernel's
  /// element count (LoweredProgram::elements()).
  ProgramRunner(const CompiledProgram& compiled, const LoweredProgram& lowered, size_t n);
  ~ProgramRunner();
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  /// Copies `inputs` (one per LoweredProgram::inputs, n elements each) in.
  void upload(llvm::ArrayRef<HostArray> inputs);
  /// Fills every output with 0xFF bytes (NaN in every floating type), so a
  /// test sees an output no kernel wrote.
  void poison_outputs();
  /// Runs the program once: the elementwise kernel, then each statement
  /// with reductions; on the GPU they are only enqueued.
  void launch();
  /// Waits for the work, then copies every output out (one per
  /// LoweredProgram::outputs, in statement order).
  void download(std::vector<HostArray>& outputs);

  /// The loaded elementwise kernel (GPU), nullptr on the CPU fallback or
  /// when the program has none.
  const rt::Kernel* kernel() const { return Kernel; }
  /// The reduction statements as compiled and loaded on the GPU (empty on
  /// the CPU fallback, which evaluates CompiledProgram::reductions).
  const std::vector<CompiledStatement>& loaded_statements() const { return Loaded; }
  /// Bytes one launch reads and writes (inputs each kernel reads, once per
  /// kernel, and outputs).
  size_t bytes_per_launch() const;

private:
  void launch_elementwise();

  const CompiledProgram& Compiled;
  const LoweredProgram& Lowered;
  size_t N;
  bool OnGpu;
  const rt::Kernel* Kernel = nullptr;
  std::vector<ir::Constant> Scalars; ///< per optimized scalar, of its type
  /// Outputs: per LoweredProgram::outputs.
  std::vector<rt::Allocation> Inputs, Outputs;
  /// The statements with reductions compiled for the GPU (empty on the CPU
  /// fallback, which runs CompiledProgram::reductions).
  std::vector<CompiledStatement> Loaded;
};

} // namespace gpukit::text
