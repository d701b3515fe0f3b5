// DeviceInfo: what GPUkit knows about a GPU, read once through the driver.
//
//   for (const DeviceInfo& d : discover_devices(api)) fmt::print("{} {}\n", d.name, d.arch());
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpukit::rt {

struct DriverApi;

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int sm_major = 0;
  int sm_minor = 0;
  int sm_count = 0;
  size_t total_memory = 0;
  size_t l2_bytes = 0;
  int max_threads_per_sm = 0;
  int driver_version = 0; ///< e.g. 13000 for CUDA 13.0

  /// "sm_90"
  std::string arch() const;
  /// The lowest architecture the GPU path supports.
  static constexpr int kMinSm = 80;
  bool supported() const { return sm_major * 10 + sm_minor >= kMinSm; }
};

/// Every device the driver reports (cuInit must have succeeded).
std::vector<DeviceInfo> discover_devices(const DriverApi& api);

} // namespace gpukit::rt
