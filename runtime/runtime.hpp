// Runtime: the process-wide entry point of the runtime layer. It loads the
// driver and NVRTC, picks the backend (GPU, or the CPU fallback with one line
// on stderr saying why), and owns the allocator, the kernel cache and the
// stream that GPUkit orders work on.
//
//   rt::Runtime& rt = rt::Runtime::get();
//   if (rt.on_gpu()) rt.launch(kernel, shape, args);
//
// The runtime compiles and launches CUDA source; it knows nothing of the IR.
#pragma once

#include "runtime/allocator.hpp"
#include "runtime/device.hpp"
#include "runtime/driver_handles.hpp"
#include "runtime/kernel_cache.hpp"

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

namespace gpukit::rt {

struct DriverApi;
struct NvrtcApi;
class MemoryPool;
namespace sched {
class Scheduling;
}

enum class Backend { Gpu, Cpu };

/// Grid and block of one launch.
struct LaunchShape {
  unsigned grid = 1;
  unsigned block = 256;
  unsigned shared_bytes = 0;
};

class Runtime {
public:
  /// The runtime, initialised on first use. GPUKIT_BACKEND=cpu forces the
  /// CPU fallback; otherwise the GPU is used when the driver, NVRTC and a
  /// device of SM >= 80 are all present.
  static Runtime& get();

  Backend backend() const { return Kind; }
  bool on_gpu() const { return Kind == Backend::Gpu; }
  /// Why the CPU fallback is in use ("CUDA driver not detected", ...); empty on the GPU.
  std::string_view fallback_reason() const { return FallbackReason; }

  /// The device in use (nullptr on the CPU fallback).
  const DeviceInfo* device() const { return Device.get(); }
  /// The driver, or nullptr when it is not loaded or cuInit failed. It may be
  /// set on the CPU fallback too (no device, or one below sm_80): test
  /// on_gpu() to choose a backend.
  const DriverApi* driver() const { return Driver; }
  /// NVRTC, or nullptr when it is not available (kernels cannot be compiled).
  const NvrtcApi* nvrtc() const { return Nvrtc; }
  /// The GPU architecture kernels are compiled for: the device's, or
  /// "sm_90" when there is no GPU (so --dump and CI still compile).
  const std::string& arch() const { return Arch; }

  /// Every array's memory: the memory pool (device memory on the GPU, host
  /// memory on the CPU fallback, the same policy). GPUKIT_MEMORY_QUOTA
  /// (bytes, or with a K/M/G suffix) bounds it.
  DeviceAllocator& allocator();
  MemoryPool& memory_pool() { return *Pool; }
  /// The scheduler and the dispatch controller every launch goes through.
  sched::Scheduling& scheduling() { return *Scheduling; }
  KernelCache& kernels() { return *Kernels; }
  /// The stream GPUkit orders its work on (nullptr on the CPU fallback).
  CUstream stream() const { return OwnedStream.get(); }

  /// Launches through the dispatch controller: on the stream of the task
  /// bound to this thread (rt::sched::TaskScope), else on the runtime's
  /// stream. `args` follows cuLaunchKernel.
  void launch(const Kernel& kernel, LaunchShape shape, void** args);

  /// Copies ordered after the work already on the runtime's stream. The
  /// host copies return when the data has arrived (the host buffer is free
  /// again); the device-to-device copy is only queued. Error{Usage} when
  /// `bytes` exceeds an Allocation's size.
  void copy_to_device(Allocation dst, const void* src, size_t bytes);
  void copy_to_host(void* dst, Allocation src, size_t bytes);
  void copy_device_to_device(Allocation dst, Allocation src, size_t bytes);
  /// Waits for all work ordered on the runtime's stream.
  void synchronize();

  /// The context GPUkit's work runs in (nullptr on the CPU fallback).
  CUcontext context() const { return Context.get(); }
  /// Makes the runtime's context current in the calling thread (a no-op on
  /// the CPU fallback). Every Runtime member that calls the driver does this
  /// itself; code elsewhere in runtime/ calling the driver directly must too.
  void make_current() const;

  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

private:
  Runtime();

  Backend Kind = Backend::Cpu;
  std::string FallbackReason;
  std::string Arch = "sm_90";
  const DriverApi* Driver = nullptr;
  const NvrtcApi* Nvrtc = nullptr;
  std::unique_ptr<DeviceInfo> Device;
  bool SyncLaunches = false; ///< GPUKIT_SYNC_LAUNCHES=1
  // Destroyed bottom-up: modules and memory before the stream, the stream
  // before the context reference.
  PrimaryContext Context;
  Stream OwnedStream;
  std::unique_ptr<MemoryPool> Pool;
  std::unique_ptr<KernelCache> Kernels;
  std::unique_ptr<sched::Scheduling> Scheduling;

  void init_gpu(const DriverApi& driver);
};

} // namespace gpukit::rt
