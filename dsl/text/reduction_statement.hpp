// A text program's statement with reductions (LoweredProgram::reductions),
// compiled and run by the engine the C++ DSL's reductions use
// (dsl/reduction_engine.hpp): the same plan gives the same kernels.
//
//   CompiledStatement c = compile_statement(lowered, 0, {});      // no GPU needed
//   fmt::print("{}", describe_statement(c));                      // what `gpukit dump` prints
//   run_statement(c, lowered, [&](size_t input) { return address_of(input); }, out.address);
//
// The engine decides the kernel family (full, row, column) from the bound
// shapes; a Row plan is compiled for its row length.
#pragma once

#include "dsl/reduction_engine.hpp"
#include "dsl/text/lower.hpp"

#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpukit::text {

struct StatementCompileOptions {
  /// Compile and load the kernels on the GPU (through the kernel cache);
  /// otherwise only their source is made.
  bool on_gpu = false;
  /// The extent an unbound size is taken to have (`gpukit dump` without
  /// --size); its name is then listed in CompiledStatement::assumed_sizes.
  int64_t unbound_extent = 1024;
};

struct CompiledStatement {
  /// Its index in LoweredProgram::reductions.
  size_t index = 0;
  detail::ReductionShape shape;
  detail::ReductionOperands operands;
  std::unique_ptr<detail::CompiledReduction> compiled;
  /// The output's shape, bound.
  Shape output;
  /// Unbound sizes taken as StatementCompileOptions::unbound_extent, when
  /// the kernels depend on them (a Row plan's row length).
  std::vector<std::string> assumed_sizes;
};

/// Checks the statement's operands against its bound shapes and emits its
/// kernels. Error{Shape} when an operand's bound shape does not fit.
CompiledStatement compile_statement(const LoweredProgram& lowered, size_t index,
                                    const StatementCompileOptions& options = {});

/// The plan (detail::describe_plan), then every kernel's CUDA source.
std::string describe_statement(const CompiledStatement& c);

/// Runs the statement once: `input(k)` is the address of LoweredProgram::
/// inputs[k] (a device address, or the host pointer on the CPU fallback),
/// `output` the output's. On the GPU the kernels are only enqueued.
/// Error{Usage} for a declared scalar without a value.
void run_statement(const CompiledStatement& c, const LoweredProgram& lowered,
                   llvm::function_ref<uint64_t(size_t input)> input, uint64_t output);

/// Bytes one run reads (each input once) and writes.
size_t statement_bytes(const LoweredProgram& lowered, size_t index);

} // namespace gpukit::text
