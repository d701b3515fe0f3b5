#include "runtime/runtime.hpp"

#include "runtime/driver_api.hpp"
#include "runtime/memory_pool.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/scheduler/scheduling.hpp"
#include "runtime/scheduler/task.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <optional>

namespace gpukit::rt {

namespace {

std::string_view environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string_view(value) : std::string_view();
}

enum class BackendRequest { Auto, Cpu, Gpu };

BackendRequest requested_backend() {
  llvm::StringRef value(environment("GPUKIT_BACKEND"));
  if (value.empty() || value.equals_insensitive("auto"))
    return BackendRequest::Auto;
  if (value.equals_insensitive("cpu"))
    return BackendRequest::Cpu;
  if (value.equals_insensitive("gpu") || value.equals_insensitive("cuda"))
    return BackendRequest::Gpu;
  throw Error(ErrorKind::Usage,
              fmt::format("GPUKIT_BACKEND='{}' is not a backend; use cpu, gpu or auto", value.str()));
}

/// GPUKIT_DEVICE, checked against the `count` devices present.
int requested_device(int count) {
  std::string_view text = environment("GPUKIT_DEVICE");
  if (text.empty())
    return 0;
  unsigned ordinal = 0;
  if (llvm::StringRef(text).getAsInteger(10, ordinal) || ordinal >= static_cast<unsigned>(count))
    throw Error(ErrorKind::Usage,
                fmt::format("GPUKIT_DEVICE='{}' does not name a GPU: this machine has {} (0 to {})",
                            text, count, count - 1));
  return static_cast<int>(ordinal);
}

/// The chosen device, or why the GPU backend cannot be used.
struct GpuProbe {
  const DriverApi* Driver = nullptr; ///< set once cuInit has succeeded
  std::optional<DeviceInfo> Device;
  std::string Reason;
};

GpuProbe probe_gpu(const NvrtcApi* nvrtc) {
  GpuProbe probe;
  const DriverApi* driver = DriverApi::load();
  if (!driver) {
    probe.Reason = DriverApi::load_error(); // "CUDA driver not detected (...)" or missing entry points
    return probe;
  }
  if (!nvrtc) {
    probe.Reason = NvrtcApi::load_error();
    return probe;
  }
  if (CUresult result = driver->cuInit(0); result != CUDA_SUCCESS) {
    probe.Reason = fmt::format("CUDA driver not detected (cuInit: {})", describe(*driver, result));
    return probe;
  }
  probe.Driver = driver;
  std::vector<DeviceInfo> devices = discover_devices(*driver);
  if (devices.empty()) {
    probe.Reason = "No GPU devices found (cuDeviceGetCount == 0)";
    return probe;
  }
  const DeviceInfo& device = devices[static_cast<size_t>(requested_device(static_cast<int>(devices.size())))];
  if (!device.supported()) {
    probe.Reason = fmt::format("GPU {} is below the supported sm_{}", device.arch(), DeviceInfo::kMinSm);
    return probe;
  }
  probe.Device = device;
  return probe;
}

/// GPUKIT_MEMORY_QUOTA: bytes, or a number with a K, M or G suffix (binary
/// units); 0 or unset: no quota beyond the device's memory.
size_t requested_memory_quota() {
  llvm::StringRef text(environment("GPUKIT_MEMORY_QUOTA"));
  if (text.empty())
    return 0;
  llvm::StringRef digits = text.rtrim("KMGkmgiIbB");
  unsigned long long value = 0;
  if (digits.getAsInteger(10, value))
    throw Error(ErrorKind::Usage,
                fmt::format("GPUKIT_MEMORY_QUOTA='{}' is not a size; write e.g. 8G, 512M or 1048576",
                            text.str()));
  switch (digits.size() < text.size() ? text[digits.size()] : ' ') {
  case 'K': case 'k': return value << 10;
  case 'M': case 'm': return value << 20;
  case 'G': case 'g': return value << 30;
  default: return value;
  }
}

} // namespace

Runtime& Runtime::get() {
  // Function-local: built on first use, thread-safely, never by a static
  // constructor; destroyed at exit after everything built later.
  static Runtime Instance;
  return Instance;
}

Runtime::Runtime() {
  BackendRequest request = requested_backend();
  // NVRTC is wanted on both backends: the CPU fallback still compiles for
  // --dump and for CI.
  Nvrtc = NvrtcApi::load();
  SyncLaunches = environment("GPUKIT_SYNC_LAUNCHES") == "1";

  if (request == BackendRequest::Cpu) {
    FallbackReason = "forced by GPUKIT_BACKEND=cpu";
  } else {
    GpuProbe probe = probe_gpu(Nvrtc);
    Driver = probe.Driver;
    if (probe.Device) {
      Device = std::make_unique<DeviceInfo>(*probe.Device);
      init_gpu(*probe.Driver);
      return;
    }
    FallbackReason = std::move(probe.Reason);
    if (request == BackendRequest::Gpu)
      throw Error(ErrorKind::Unavailable,
                  fmt::format("GPUKIT_BACKEND=gpu, but the GPU backend cannot be used: {}", FallbackReason));
  }

  Kind = Backend::Cpu;
  size_t quota = requested_memory_quota();
  Pool = make_host_pool(quota);
  Kernels = std::make_unique<KernelCache>(Nvrtc, nullptr, Arch);
  Scheduling = sched::Scheduling::on_cpu(quota ? quota : UINT64_MAX);
  // The Runtime exists once per process, so this line is printed once.
  if (environment("GPUKIT_QUIET") != "1")
    llvm::errs() << "gpukit: Falling back to CPU simulation backend: " << FallbackReason << "\n";
}

void Runtime::init_gpu(const DriverApi& driver) {
  CUdevice device = 0;
  check(driver.cuDeviceGet(&device, Device->ordinal), "cuDeviceGet");
  Context = PrimaryContext(driver, device);
  rt::make_current(driver, Context.get());
  OwnedStream = Stream(driver, Context.get());
  Kind = Backend::Gpu;
  Arch = Device->arch();
  size_t quota = requested_memory_quota();
  Pool = make_device_pool(driver, OwnedStream.get(), quota, Context.get());
  Kernels = std::make_unique<KernelCache>(Nvrtc, Driver, Arch, KernelCacheConfig{Context.get()});
  Scheduling = sched::Scheduling::on_gpu(driver, Context.get(), OwnedStream.get(),
                                         quota ? quota : Device->total_memory);
}

Runtime::~Runtime() {
  // The dispatch controller drains its streams first; then kernels and
  // memory go, before the stream and the context reference they live in.
  Scheduling.reset();
  Kernels.reset();
  if (Pool)
    Pool->retire_stream(OwnedStream.get());
  Pool.reset();
}

DeviceAllocator& Runtime::allocator() { return *Pool; }

void Runtime::make_current() const {
  if (on_gpu())
    rt::make_current(*Driver, Context.get());
}

void Runtime::launch(const Kernel& kernel, LaunchShape shape, void** args) {
  if (!on_gpu())
    throw Error(ErrorKind::Usage,
                fmt::format("cannot launch kernel '{}': GPUkit runs on the CPU simulation backend ({})",
                            kernel.name, FallbackReason));
  if (!kernel.function)
    throw Error(ErrorKind::Internal,
                fmt::format("kernel '{}' was compiled but never loaded into a context", kernel.name));
  if (shape.grid == 0 || shape.block == 0)
    throw Error(ErrorKind::Usage, fmt::format("cannot launch kernel '{}' with grid {} and block {}: "
                                              "both must be at least 1",
                                              kernel.name, shape.grid, shape.block));
  make_current();
  auto describe_launch = [&] {
    return fmt::format("kernel '{}' (grid {}, block {}, {} bytes of shared memory)", kernel.name,
                       shape.grid, shape.block, shape.shared_bytes);
  };
  // Above 48 KiB of dynamic shared memory a kernel must opt in.
  constexpr unsigned DefaultSharedLimit = 48 * 1024;
  if (shape.shared_bytes > DefaultSharedLimit) {
    CUresult result = Driver->cuFuncSetAttribute(kernel.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 static_cast<int>(shape.shared_bytes));
    if (result != CUDA_SUCCESS)
      check(result, fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) for {}", describe_launch()));
  }
  sched::Task* task = sched::current_task();
  try {
    Scheduling->dispatch().launch(task, kernel.function, shape, args);
    if (SyncLaunches)
      Scheduling->dispatch().synchronize(task);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("{}{}: {}", describe_launch(),
                                      SyncLaunches ? " (caught by GPUKIT_SYNC_LAUNCHES=1)" : "", e.what()));
  }
}

namespace {

void check_copy_bounds(const char* what, size_t bytes, const Allocation& allocation) {
  if (bytes > allocation.bytes)
    throw Error(ErrorKind::Usage, fmt::format("{} of {} bytes overruns an allocation of {} bytes",
                                              what, bytes, allocation.bytes));
}

} // namespace

void Runtime::copy_to_device(Allocation dst, const void* src, size_t bytes) {
  if (bytes == 0)
    return;
  check_copy_bounds("copy to the device", bytes, dst);
  if (!on_gpu()) {
    std::memcpy(dst.host_ptr(), src, bytes);
    return;
  }
  make_current();
  // On the runtime's stream, so it is ordered after kernels already queued
  // there; then wait, since `src` belongs to the caller after we return.
  check(Driver->cuMemcpyHtoDAsync(dst.device_ptr(), src, bytes, stream()), "cuMemcpyHtoDAsync");
  check(Driver->cuStreamSynchronize(stream()), "cuStreamSynchronize after a copy to the device");
}

void Runtime::copy_to_host(void* dst, Allocation src, size_t bytes) {
  if (bytes == 0)
    return;
  check_copy_bounds("copy to the host", bytes, src);
  if (!on_gpu()) {
    std::memcpy(dst, src.host_ptr(), bytes);
    return;
  }
  make_current();
  check(Driver->cuMemcpyDtoHAsync(dst, src.device_ptr(), bytes, stream()), "cuMemcpyDtoHAsync");
  check(Driver->cuStreamSynchronize(stream()), "cuStreamSynchronize after a copy to the host");
}

void Runtime::copy_device_to_device(Allocation dst, Allocation src, size_t bytes) {
  if (bytes == 0)
    return;
  check_copy_bounds("device-to-device copy (source)", bytes, src);
  check_copy_bounds("device-to-device copy (destination)", bytes, dst);
  if (!on_gpu()) {
    std::memmove(dst.host_ptr(), src.host_ptr(), bytes);
    return;
  }
  make_current();
  // No host memory is involved, so stream order is all that later work
  // needs: no wait.
  check(Driver->cuMemcpyDtoDAsync(dst.device_ptr(), src.device_ptr(), bytes, stream()),
        "cuMemcpyDtoDAsync");
}

void Runtime::synchronize() {
  if (!on_gpu())
    return;
  make_current();
  check(Driver->cuStreamSynchronize(stream()), "cuStreamSynchronize");
}

} // namespace gpukit::rt
