// The CUDA driver API, loaded at run time. GPUkit never links libcuda: this
// file dlopen()s libcuda.so.1 and resolves each entry point it uses, so a
// machine without a driver still runs everything on the CPU fallback.
//
//   const DriverApi* cu = DriverApi::load();   // nullptr when unavailable
//   if (cu) check(cu->cuInit(0), "cuInit");
//
// Names resolve to the versioned symbols cuda.h maps them to
// (cuMemAlloc -> cuMemAlloc_v2), so the calls have the ABI of the headers we
// compiled against.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace gpukit::rt {

#define GPUKIT_STRINGIFY_EXPANDED_(x) #x
#define GPUKIT_STRINGIFY_EXPANDED(x) GPUKIT_STRINGIFY_EXPANDED_(x)

/// Every driver entry point GPUkit calls. Add one here and it is resolved,
/// reported when missing, and callable as `api.cuName(...)`.
#define GPUKIT_DRIVER_FUNCTIONS(X)                                                                 \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)                                                                              \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceTotalMem)                                                                              \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease)                                                                     \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxGetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuMemGetInfo)                                                                                  \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemAllocHost)                                                                                \
  X(cuMemFreeHost)                                                                                 \
  X(cuMemHostRegister)                                                                             \
  X(cuMemHostUnregister)                                                                           \
  X(cuMemAllocAsync)                                                                               \
  X(cuMemFreeAsync)                                                                                \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemcpyDtoD)                                                                                  \
  X(cuMemcpyHtoDAsync)                                                                             \
  X(cuMemcpyDtoHAsync)                                                                             \
  X(cuMemcpyDtoDAsync)                                                                             \
  X(cuMemsetD8)                                                                                    \
  X(cuMemsetD8Async)                                                                               \
  X(cuMemsetD32Async)                                                                              \
  X(cuStreamCreate)                                                                                \
  X(cuStreamCreateWithPriority)                                                                    \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamSynchronize)                                                                           \
  X(cuStreamQuery)                                                                                 \
  X(cuStreamWaitEvent)                                                                             \
  X(cuCtxGetStreamPriorityRange)                                                                   \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy)                                                                                \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventQuery)                                                                                  \
  X(cuEventElapsedTime)                                                                            \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncGetAttribute)                                                                            \
  X(cuFuncSetAttribute)                                                                            \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                   \
  X(cuLaunchKernel)                                                                                \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuGraphInstantiate)                                                                            \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGraphDestroy)

struct DriverApi {
#define GPUKIT_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  GPUKIT_DRIVER_FUNCTIONS(GPUKIT_DRIVER_MEMBER)
#undef GPUKIT_DRIVER_MEMBER

  /// Loads libcuda.so.1 once per process. Returns nullptr when the library or
  /// any entry point is missing; load_error() then says exactly what.
  static const DriverApi* load();
  static const std::string& load_error();
};

/// The driver's name and description for a result code:
/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string describe(const DriverApi& api, CUresult result);

/// Throws gpukit::Error{Driver} naming the call when `result` is not
/// CUDA_SUCCESS (ErrorKind::OutOfMemory for CUDA_ERROR_OUT_OF_MEMORY).
void check(CUresult result, std::string_view call);

} // namespace gpukit::rt
