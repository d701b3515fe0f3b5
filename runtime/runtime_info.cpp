#include "runtime/runtime_info.hpp"

#include "runtime/disk_cache.hpp"
#include "runtime/byte_size.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/runtime.hpp"

#include <fmt/format.h>

#include <exception>

namespace gpukit::rt {

namespace {

std::string version_text(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

/// Every device, when the driver is up; empty otherwise. The Runtime only
/// keeps the one it uses, and `gpukit info` should show them all.
std::vector<DeviceInfo> all_devices(const DriverApi* driver) {
  if (!driver)
    return {};
  try {
    return discover_devices(*driver);
  } catch (const std::exception&) {
    return {};
  }
}

} // namespace

std::string describe_runtime() {
  Runtime& rt = Runtime::get();
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("{:<14}{}\n", fmt::format("{}:", label), value);
  };

  const DriverApi* driver = rt.driver();
  if (driver) {
    int version = 0;
    driver->cuDriverGetVersion(&version);
    line("CUDA driver", fmt::format("{} (driver API version {})", version_text(version), version));
  } else if (!DriverApi::load()) {
    line("CUDA driver", DriverApi::load_error());
  } else {
    line("CUDA driver", rt.backend() == Backend::Cpu && !rt.fallback_reason().empty()
                            ? fmt::format("loaded, not initialised ({})", rt.fallback_reason())
                            : std::string("loaded, not initialised"));
  }

  if (const NvrtcApi* nvrtc = rt.nvrtc())
    line("NVRTC", fmt::format("{}.{} ({})", nvrtc->major, nvrtc->minor, nvrtc->path));
  else
    line("NVRTC", NvrtcApi::load_error());

  std::vector<DeviceInfo> devices = all_devices(driver);
  if (devices.empty())
    line("Devices", "none");
  for (const DeviceInfo& d : devices) {
    bool in_use = rt.device() && rt.device()->ordinal == d.ordinal;
    line(fmt::format("Device {}", d.ordinal),
         fmt::format("{}, {}, {} SMs, {} memory, {} L2{}{}", d.name, d.arch(), d.sm_count,
                     format_bytes(d.total_memory), format_bytes(d.l2_bytes),
                     d.supported() ? "" : fmt::format(" (below sm_{})", DeviceInfo::kMinSm),
                     in_use ? " [in use]" : ""));
  }

  if (rt.on_gpu())
    line("Backend", fmt::format("GPU (device {}, kernels for {})", rt.device()->ordinal, rt.arch()));
  else
    line("Backend", fmt::format("CPU simulation: {} (kernels compile for {})", rt.fallback_reason(),
                                rt.arch()));

  const std::string& directory = rt.kernels().directory();
  if (directory.empty()) {
    line("Kernel cache", disk_cache_enabled() ? std::string("in memory only (no cache directory: set "
                                                            "GPUKIT_CACHE_DIR or HOME)")
                                              : std::string("in memory only (GPUKIT_CACHE=off)"));
  } else {
    DiskCache disk(directory);
    std::vector<CacheEntryInfo> entries = disk.list();
    uint64_t bytes = 0;
    for (const CacheEntryInfo& entry : entries)
      bytes += entry.file_bytes;
    line("Kernel cache", fmt::format("{} ({} entries, {})", directory, entries.size(), format_bytes(bytes)));
  }
  return out;
}

} // namespace gpukit::rt
