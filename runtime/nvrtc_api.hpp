// NVRTC, loaded at run time. Found in $CUDA_PATH/lib64, /usr/local/cuda/lib64
// and the loader path (libnvrtc.so, libnvrtc.so.13, .12, .11.2), never linked.
//
//   const NvrtcApi* nvrtc = NvrtcApi::load();  // nullptr when unavailable
//
// NVRTC needs no GPU: with it, kernels compile (and --dump, CI tests work)
// on machines without one.
#pragma once

#include <nvrtc.h>

#include <string>

namespace gpukit::rt {

#define GPUKIT_NVRTC_FUNCTIONS(X)                                                                  \
  X(nvrtcVersion)                                                                                  \
  X(nvrtcGetErrorString)                                                                           \
  X(nvrtcCreateProgram)                                                                            \
  X(nvrtcDestroyProgram)                                                                           \
  X(nvrtcCompileProgram)                                                                           \
  X(nvrtcGetProgramLogSize)                                                                        \
  X(nvrtcGetProgramLog)                                                                            \
  X(nvrtcGetCUBINSize)                                                                             \
  X(nvrtcGetCUBIN)                                                                                 \
  X(nvrtcGetPTXSize)                                                                               \
  X(nvrtcGetPTX)                                                                                   \
  X(nvrtcGetSupportedArchs)                                                                        \
  X(nvrtcGetNumSupportedArchs)

struct NvrtcApi {
#define GPUKIT_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  GPUKIT_NVRTC_FUNCTIONS(GPUKIT_NVRTC_MEMBER)
#undef GPUKIT_NVRTC_MEMBER

  /// The path of the library that was loaded, and its version.
  std::string path;
  int major = 0, minor = 0;

  /// Loads NVRTC once per process; nullptr when missing (see load_error()).
  static const NvrtcApi* load();
  static const std::string& load_error();
};

} // namespace gpukit::rt
