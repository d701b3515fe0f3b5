#include "runtime/driver_handles.hpp"

#include "runtime/driver_api.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <string>

namespace gpukit::rt {

void make_current(const DriverApi& api, CUcontext context) {
  if (!context)
    return;
  // Ask the driver rather than trusting a thread_local of our own: another
  // library in the same thread (cudart, a user's driver code) may have
  // switched contexts since we last looked. cuCtxGetCurrent is a TLS read.
  CUcontext current = nullptr;
  if (api.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context)
    return;
  check(api.cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

/// Best effort for destructors: never throws.
static void make_current_quietly(const DriverApi& api, CUcontext context) {
  CUcontext current = nullptr;
  if (context && (api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context))
    (void)api.cuCtxSetCurrent(context);
}

PrimaryContext::PrimaryContext(const DriverApi& api, CUdevice device) : Api(&api), Device(device) {
  check(api.cuDevicePrimaryCtxRetain(&Context, device),
        fmt::format("cuDevicePrimaryCtxRetain(device {})", static_cast<int>(device)));
}

PrimaryContext::~PrimaryContext() {
  // The primary context stays current where it is: other libraries in the
  // process may share it, and a primary context handle stays valid after
  // its last release (the driver re-initialises it on the next retain).
  if (Context)
    (void)Api->cuDevicePrimaryCtxRelease(Device);
}

Stream::Stream(const DriverApi& api, CUcontext context) : Api(&api), Context(context) {
  make_current(api, context);
  check(api.cuStreamCreate(&Handle, CU_STREAM_NON_BLOCKING), "cuStreamCreate(CU_STREAM_NON_BLOCKING)");
}

Stream::~Stream() {
  if (!Handle)
    return;
  make_current_quietly(*Api, Context);
  (void)Api->cuStreamDestroy(Handle);
}

Module::Module(const DriverApi& api, CUcontext context, const std::vector<char>& image,
               std::string_view what)
    : Api(&api), Context(context) {
  make_current(api, context);
  check(api.cuModuleLoadData(&Handle, image.data()),
        fmt::format("cuModuleLoadData({}, {} bytes)", what, image.size()));
}

Module::~Module() {
  if (!Handle)
    return;
  make_current_quietly(*Api, Context);
  (void)Api->cuModuleUnload(Handle);
}

CUfunction Module::function(std::string_view name) const {
  CUfunction function = nullptr;
  std::string symbol(name);
  check(Api->cuModuleGetFunction(&function, Handle, symbol.c_str()),
        fmt::format("cuModuleGetFunction({}) (is the kernel declared extern \"C\" __global__?)", name));
  return function;
}

} // namespace gpukit::rt
