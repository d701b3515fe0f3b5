// Owners of CUDA driver handles: each one releases its handle when it dies,
// so no context reference, stream or module outlives its user.
//
//   PrimaryContext ctx(api, device);      // cuDevicePrimaryCtxRetain / Release
//   make_current(api, ctx.get());
//   Stream stream(api, ctx.get());         // non-blocking; cuStreamDestroy
//   Module module(api, ctx.get(), cubin); // cuModuleLoadData / cuModuleUnload
//
// Destructors make their context current first (the destroying thread may
// not be the creating one) and ignore failures: at process exit the driver
// may already be shutting down, and a destructor must not throw.
#pragma once

#include <cuda.h>

#include <string_view>
#include <utility>
#include <vector>

namespace gpukit::rt {

struct DriverApi;

/// Makes `context` current in the calling thread unless it already is.
/// Every driver call that needs a context goes through this first.
void make_current(const DriverApi& api, CUcontext context);

/// A reference to a device's primary context (shared with cudart and any
/// other library in the process, so GPUkit interoperates with them).
class PrimaryContext {
public:
  PrimaryContext() = default;
  PrimaryContext(const DriverApi& api, CUdevice device);
  PrimaryContext(PrimaryContext&& other) noexcept { swap(other); }
  PrimaryContext& operator=(PrimaryContext&& other) noexcept {
    PrimaryContext(std::move(other)).swap(*this);
    return *this;
  }
  ~PrimaryContext();

  CUcontext get() const { return Context; }

private:
  void swap(PrimaryContext& other) noexcept {
    std::swap(Api, other.Api);
    std::swap(Device, other.Device);
    std::swap(Context, other.Context);
  }

  const DriverApi* Api = nullptr;
  CUdevice Device = 0;
  CUcontext Context = nullptr;
};

/// A non-blocking stream (it does not synchronise with the legacy NULL stream).
class Stream {
public:
  Stream() = default;
  Stream(const DriverApi& api, CUcontext context);
  Stream(Stream&& other) noexcept { swap(other); }
  Stream& operator=(Stream&& other) noexcept {
    Stream(std::move(other)).swap(*this);
    return *this;
  }
  ~Stream();

  CUstream get() const { return Handle; }

private:
  void swap(Stream& other) noexcept {
    std::swap(Api, other.Api);
    std::swap(Context, other.Context);
    std::swap(Handle, other.Handle);
  }

  const DriverApi* Api = nullptr;
  CUcontext Context = nullptr;
  CUstream Handle = nullptr;
};

/// A loaded CUBIN.
class Module {
public:
  Module() = default;
  /// Loads `image` into `context`; throws Error{Driver} naming `what`.
  Module(const DriverApi& api, CUcontext context, const std::vector<char>& image,
         std::string_view what);
  Module(Module&& other) noexcept { swap(other); }
  Module& operator=(Module&& other) noexcept {
    Module(std::move(other)).swap(*this);
    return *this;
  }
  ~Module();

  CUmodule get() const { return Handle; }
  /// The entry point `name`; throws Error{Driver} when the image lacks it.
  CUfunction function(std::string_view name) const;

private:
  void swap(Module& other) noexcept {
    std::swap(Api, other.Api);
    std::swap(Context, other.Context);
    std::swap(Handle, other.Handle);
  }

  const DriverApi* Api = nullptr;
  CUcontext Context = nullptr;
  CUmodule Handle = nullptr;
};

} // namespace gpukit::rt
