#include "runtime/driver_api.hpp"

#include "runtime/dynamic_library.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace gpukit::rt {

namespace {

/// The driver as loaded once for the process: the library stays open (and
/// mapped, see Lifetime::Process) for as long as the table may be called.
struct LoadedDriver {
  std::optional<DynamicLibrary> Library;
  DriverApi Api;
  bool Usable = false;
  std::string Error;
};

/// Names the error as "<library>: <reason>"; dlerror() usually already
/// starts with the library name.
std::string name_dl_error(const std::string& library, const std::string& message) {
  if (message.rfind(library, 0) == 0)
    return message;
  return fmt::format("{}: {}", library, message);
}

LoadedDriver load_driver() {
  LoadedDriver loaded;
  // libcuda.so.1 is what the driver package installs; the unversioned name
  // only exists with a toolkit's stubs or a developer symlink.
  std::string primary_error;
  for (const char* name : {"libcuda.so.1", "libcuda.so"}) {
    std::string error;
    loaded.Library = DynamicLibrary::open(name, &error, DynamicLibrary::Lifetime::Process);
    if (loaded.Library)
      break;
    if (primary_error.empty())
      primary_error = name_dl_error(name, error);
  }
  if (!loaded.Library) {
    loaded.Error = fmt::format("CUDA driver not detected ({})", primary_error);
    return loaded;
  }

  std::vector<const char*> missing;
  // cuda.h maps each name to its current ABI (cuMemAlloc -> cuMemAlloc_v2):
  // look up that versioned symbol so the call matches the prototype.
#define GPUKIT_RESOLVE(name)                                                                       \
  loaded.Api.name = reinterpret_cast<decltype(&::name)>(                                           \
      loaded.Library->symbol(GPUKIT_STRINGIFY_EXPANDED(name)));                                    \
  if (!loaded.Api.name)                                                                            \
    missing.push_back(GPUKIT_STRINGIFY_EXPANDED(name));
  GPUKIT_DRIVER_FUNCTIONS(GPUKIT_RESOLVE)
#undef GPUKIT_RESOLVE

  if (!missing.empty()) {
    loaded.Error = fmt::format("CUDA driver is missing entry points: {} ({}; update the NVIDIA "
                               "driver to one that supports CUDA {}.{})",
                               fmt::join(missing, ", "), loaded.Library->loaded_path(),
                               CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return loaded;
  }
  loaded.Usable = true;
  return loaded;
}

const LoadedDriver& loaded_driver() {
  // A function-local static: initialised exactly once, thread-safely, on
  // first use, and never as a static constructor of the library.
  static const LoadedDriver Loaded = load_driver();
  return Loaded;
}

} // namespace

const DriverApi* DriverApi::load() {
  const LoadedDriver& loaded = loaded_driver();
  return loaded.Usable ? &loaded.Api : nullptr;
}

const std::string& DriverApi::load_error() { return loaded_driver().Error; }

namespace {

/// Names for the results that matter before the driver can name them
/// itself: the toolkit's stub libcuda answers cuGetErrorName with an error,
/// and check() may run without a driver at all.
std::string fallback_description(CUresult result) {
  switch (result) {
  case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY (out of memory)";
  case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY (the CUDA toolkit's stub libcuda.so was loaded instead of the "
           "NVIDIA driver's; remove its directory from LD_LIBRARY_PATH)";
  case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER (update the NVIDIA driver)";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (the driver library and kernel module versions differ)";
  default: // CUresult is an open set of codes: only the common ones are named here
    return fmt::format("CUresult {}", static_cast<int>(result));
  }
}

} // namespace

std::string describe(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return fallback_description(result);
  if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    return name;
  return fmt::format("{} ({})", name, text);
}

void check(CUresult result, std::string_view call) {
  if (result == CUDA_SUCCESS)
    return;
  const DriverApi* api = DriverApi::load();
  std::string what = api ? describe(*api, result) : fallback_description(result);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    throw Error(ErrorKind::OutOfMemory, fmt::format("{} failed: {}", call, what));
  throw Error(ErrorKind::Driver, fmt::format("{} failed: {}", call, what));
}

} // namespace gpukit::rt
