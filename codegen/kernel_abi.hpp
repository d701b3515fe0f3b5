// How a launcher passes arguments to a kernel from emit_cuda(), and how the
// CPU evaluator reads the same values, so both see identical numbers.
//
//   std::vector<std::byte> arg(scalar_argument_size(param.type));
//   write_scalar_argument(value, param.type, arg.data());   // then into cuLaunchKernel's args
//
// Arrays are passed as device pointers to their storage type (see
// cuda_emitter.hpp); the element count as `unsigned` (or `unsigned long long`
// with EmitOptions::index64).
#pragma once

#include "codegen/ir.hpp"

namespace gpukit::codegen {

/// Bytes of a scalar argument of type `t`: its compute type's size (float16
/// and bfloat16 scalars travel as a 4-byte float, bool as one byte).
unsigned scalar_argument_size(DType t);

/// Writes `value` converted to `t` (with the Cast operation's semantics;
/// half precision rounded to nearest even) as the kernel's parameter of type
/// `t` expects it. `dst` holds scalar_argument_size(t) bytes.
void write_scalar_argument(const ir::Constant& value, DType t, void* dst);

} // namespace gpukit::codegen
