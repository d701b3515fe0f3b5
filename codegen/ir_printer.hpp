// The IR's text form and its structural hash.
//
//   llvm::outs() << ir::print(program);   // what `gpukit dump --ir` shows
//   uint64_t key = ir::structural_hash(program);
//
// The text is stable (it is what the golden tests compare) and readable:
//
//   # out = 2 * x + sin(y)  (examples/saxpy.cpp:18)
//   kernel(x: f32[], y: f32[]; s0: f32 weak) -> (out: f32[])
//     %0 = input x : f32
//     %1 = scalar s0 : f32
//     %2 = mul %1, %0 : f32
//     ...
//     out = %5
//
// A `# label` line comes first when the program has one; `fn name(params) ->
// type` lines list user functions (bodies are not printed); nodes whose type
// is not yet inferred print `: ?`.
#pragma once

#include "codegen/ir.hpp"

#include <cstdint>
#include <string>

namespace gpukit::ir {

/// The program as text, one node per line.
std::string print(const Program& program);

/// The text of one literal as print() shows it ("2", "-0.5", "true", "nan").
std::string print_constant(const Constant& value);

/// xxHash64 of print() without the label, followed by every user function's
/// name and body: programs that compute the same thing the same way hash
/// alike wherever they came from.
uint64_t structural_hash(const Program& program);

} // namespace gpukit::ir
