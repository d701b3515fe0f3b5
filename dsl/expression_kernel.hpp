// The engine behind `out = expr;`: the compiled kernel variants of one
// assignment type, and the non-template code that finds or builds one and
// launches it. dsl/assign.hpp (the templates) collects an assignment's
// operands; everything else happens here, compiled once.
//
//   static KernelVariants& v = variants_for<Signature>();   // one per C++ type
//   execute(v, {outputs, leaves, scalars, &where});          // the hot path
//
// Hot path: check shapes, compute the variant key (backend, 64-bit indexing,
// which operands share a buffer, vectorisation, which scalars are equal), find the variant in a small
// vector, pack the kernel arguments on the stack and launch. The IR is built,
// optimised and emitted only the first time a variant is met. Users see this
// file only through inspect() and expression_stats().
#pragma once

#include "codegen/ir.hpp"
#include "dsl/expr_printer.hpp"
#include "dsl/ir_builder.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>

namespace gpukit {

/// Counters of the expression engine, for tests and tools.
struct ExpressionStats {
  uint64_t ir_builds = 0;    ///< kernel variants built (IR built, optimised, emitted)
  uint64_t gpu_launches = 0; ///< kernels launched on the GPU
  uint64_t cpu_runs = 0;     ///< kernels evaluated by the CPU fallback
};

ExpressionStats expression_stats();

/// An assignment's kernel, as inspect() shows it.
struct KernelInfo {
  std::string name;   ///< the kernel's entry point, e.g. "ew_7c1f09a2"
  std::string label;  ///< `out = 2 * x + sin(y)` and where it was written
  std::string ir;     ///< the optimised IR (ir::print)
  std::string source; ///< the CUDA source
  unsigned pack_width = 1;
};

namespace detail {

class ArrayBase;

/// The static description of one assignment's C++ type.
struct AssignmentType {
  unsigned num_outputs;
  unsigned num_arrays;
  unsigned num_scalars;
  /// Builds every output's expression, in order (IrBuilder::output each).
  void (*build)(IrBuilder&);
  /// Prints expression `k` (without "out = ").
  void (*print)(ExprPrinter&, unsigned k);
};

/// One call's operands, in traversal order.
struct AssignmentCall {
  llvm::ArrayRef<ArrayBase*> outputs;
  llvm::ArrayRef<const ArrayBase*> leaves;
  llvm::ArrayRef<ir::Constant> scalars;
  const std::source_location* where = nullptr;
};

struct CompiledExpression;

/// The cheap run-time part of a variant's identity.
struct VariantKey {
  uint8_t flags = 0; ///< kOnGpu | kIndex64 | kVectorize
  uint8_t size_bucket = 0; ///< variant_size_bucket(n): tuned answers are per size bucket
  /// Per operand slot (outputs, then array leaves): the first slot that is the same view.
  llvm::SmallVector<uint8_t, 12> alias;
  /// Per scalar slot: the first slot holding an equal value (shares_scalar_slot)
  /// that the variant passes as the same kernel scalar, so CSE can merge what
  /// is computed from them; empty when every slot is its own scalar.
  llvm::SmallVector<uint8_t, 16> scalar_same;
  /// The layout class of views and broadcast operands: 0 when every
  /// operand is dense and of the output's shape (the flat kernel), else the
  /// iteration rank, with `layout` per slot holding 2 bits of
  /// codegen::AxisAccess per axis. Strides are kernel arguments, not part of the key.
  uint8_t layout_rank = 0;
  llvm::SmallVector<uint8_t, 12> layout;

  static constexpr uint8_t kOnGpu = 1, kIndex64 = 2, kVectorize = 4;
  bool operator==(const VariantKey&) const = default;
};

/// The compiled variants of one assignment type. Function-local statics of
/// assign.hpp's templates own one each (never destroyed: assignments in
/// static destructors keep working).
class KernelVariants {
public:
  explicit KernelVariants(const AssignmentType& type);
  ~KernelVariants();

  const AssignmentType& type() const { return Type; }
  /// The variant for `key`, building it from `call` the first time.
  const CompiledExpression& get(const VariantKey& key, const AssignmentCall& call);
  /// Whether keys may still carry a scalar equality pattern: each new
  /// pattern builds a variant, so after kMaxScalarPatterns of them every
  /// further call passes each scalar on its own (the patterns already built
  /// keep being used when their key comes again).
  bool merges_scalars() const {
    return ScalarPatterns.load(std::memory_order_relaxed) < kMaxScalarPatterns;
  }
  static constexpr unsigned kMaxScalarPatterns = 4;

private:
  const AssignmentType& Type;
  std::mutex Lock;
  llvm::SmallVector<std::pair<VariantKey, std::unique_ptr<CompiledExpression>>, 2> Variants;
  std::atomic<unsigned> ScalarPatterns{0};
};

/// Runs an assignment: the hot path.
void execute(KernelVariants& variants, const AssignmentCall& call);

/// The kernel an assignment would run, built (and cached) but not run.
KernelInfo inspect(KernelVariants& variants, const AssignmentCall& call);

} // namespace detail
} // namespace gpukit
