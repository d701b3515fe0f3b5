// RawKernel: a hand-written CUDA kernel, compiled at run time through the
// same kernel cache as generated ones (like CuPy's RawKernel).
//
//   gpukit::RawKernel scale(R"(extern "C" __global__ void scale(float* x, float a, unsigned n) {
//     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; })", "scale");
//   scale.launch((n + 255) / 256, 256, x, 2.0f, unsigned(n));
//
// Arguments: an Array<T> is passed as a pointer to its first element (T* in
// the kernel; half and bfloat16 arrays as __half* / __nv_bfloat16*), a C++
// scalar by value with exactly its C++ type (pass unsigned(n), not n, to an
// `unsigned` parameter). The entry point must be `extern "C"`. Launches are
// ordered on the runtime's stream like every GPUkit kernel; they do not wait.
// There is no CPU version of CUDA source: on the CPU fallback launch()
// throws Error{Unavailable}, and compile() still compiles (NVRTC needs no GPU).
#pragma once

#include "dsl/array.hpp"
#include "dsl/operand_pins.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"

#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace gpukit {

class RawKernel {
public:
  /// `options` are extra NVRTC options (e.g. "-DTILE=32"); nothing compiles yet.
  RawKernel(std::string source, std::string name, std::vector<std::string> options = {});

  /// Compiles (or finds in the cache) the kernel. Error{Compile} with NVRTC's
  /// log, Error{Unavailable} without NVRTC.
  const rt::Kernel& compile();

  /// Launches `grid` blocks of `block` threads with `args`.
  template <typename... Args> void launch(unsigned grid, unsigned block, const Args&... args) {
    launch(rt::LaunchShape{grid, block, 0}, args...);
  }
  /// Launches with an explicit shape (and dynamic shared memory).
  template <typename... Args> void launch(rt::LaunchShape shape, const Args&... args) {
    // One 8-byte slot per argument (Arrays: the device address; scalars:
    // their bytes); cuLaunchKernel reads each through args[k].
    // Array arguments stay resident (not spilled) until the launch is
    // enqueued; every one is pinned before any address is read.
    detail::OperandPins pins;
    (pin_array(pins, args), ...);
    std::array<uint64_t, sizeof...(Args) ? sizeof...(Args) : 1> slots{};
    std::array<void*, sizeof...(Args) ? sizeof...(Args) : 1> pointers{};
    size_t k = 0;
    ((slots[k] = argument_bits(args), pointers[k] = &slots[k], ++k), ...);
    launch_packed(shape, pointers.data());
  }

  const std::string& name() const { return Name; }
  const std::string& source() const { return Source; }

private:
  template <typename A> static void pin_array(detail::OperandPins& pins, const A& a) {
    if constexpr (is_array_v<A>)
      pins.add(a);
  }
  template <typename A> static uint64_t argument_bits(const A& a) {
    if constexpr (is_array_v<A>) {
      return a.address();
    } else {
      static_assert(CppScalar<A>, "RawKernel::launch: arguments must be gpukit::Array<T> (passed "
                                  "as a device pointer) or C++ arithmetic scalars (passed by value)");
      uint64_t bits = 0;
      if constexpr (std::is_same_v<A, half> || std::is_same_v<A, bfloat16>)
        std::memcpy(&bits, &a.bits, sizeof(a.bits));
      else
        std::memcpy(&bits, &a, sizeof(A));
      return bits;
    }
  }

  void launch_packed(rt::LaunchShape shape, void** args);

  std::string Source;
  std::string Name;
  std::vector<std::string> Options;
  std::once_flag Compiled;
  const rt::Kernel* Kernel = nullptr;
};

} // namespace gpukit
