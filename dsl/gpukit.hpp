// GPUkit: array expressions in C++ that run as generated CUDA kernels.
// This is the header users include.
//
//   #include "dsl/gpukit.hpp"
//
//   auto x = gpukit::Array<float>::random({1 << 24}, /*seed=*/1).named("x");
//   auto y = gpukit::Array<float>::random({1 << 24}, /*seed=*/2).named("y");
//   gpukit::Array<float> out(x.shape());
//   out = 2.0f * x + sin(y);             // one kernel, compiled once, cached
//   std::vector<float> h = out.to_host();
//
// An assignment lowers the whole expression to the IR (codegen/ir.hpp), emits
// CUDA, compiles it with NVRTC the first time and launches it; later
// assignments of the same expression type only launch. Without a usable GPU
// the same code runs on the CPU fallback (one line on stderr says why).
// GPUKIT_DUMP=1 prints each kernel's source when it is built;
// gpukit::source_of(out, expr) returns it without running anything.
//
// What is here: Array<T> (dsl/array.hpp), operators, math functions,
// where/cast (operators.hpp, functions.hpp, where_cast.hpp), one- and
// multi-output assignment (assign.hpp), user device functions
// (device_function.hpp) and raw CUDA kernels (raw_kernel.hpp). Element types
// and promotion: docs/TYPES.md.
#pragma once

#include "dsl/array.hpp"
#include "dsl/assign.hpp"
#include "dsl/device_function.hpp"
#include "dsl/functions.hpp"
#include "dsl/operators.hpp"
#include "dsl/raw_kernel.hpp"
#include "dsl/reduce.hpp"
#include "dsl/shape.hpp"
#include "dsl/where_cast.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"
