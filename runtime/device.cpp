#include "runtime/device.hpp"

#include "runtime/driver_api.hpp"

#include <fmt/format.h>

namespace gpukit::rt {

std::string DeviceInfo::arch() const { return fmt::format("sm_{}{}", sm_major, sm_minor); }

namespace {

int attribute(const DriverApi& api, CUdevice device, CUdevice_attribute which, const char* what) {
  int value = 0;
  check(api.cuDeviceGetAttribute(&value, which, device), what);
  return value;
}

} // namespace

std::vector<DeviceInfo> discover_devices(const DriverApi& api) {
  int driver_version = 0;
  check(api.cuDriverGetVersion(&driver_version), "cuDriverGetVersion");
  int count = 0;
  check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");

  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
    DeviceInfo info;
    info.ordinal = ordinal;
    info.driver_version = driver_version;
    char name[256] = {};
    check(api.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
    info.name = name;
    info.sm_major = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
    info.sm_minor = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
    info.sm_count = attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                              "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
    info.l2_bytes = static_cast<size_t>(
        attribute(api, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "cuDeviceGetAttribute(L2_CACHE_SIZE)"));
    info.max_threads_per_sm =
        attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                  "cuDeviceGetAttribute(MAX_THREADS_PER_MULTIPROCESSOR)");
    size_t total = 0;
    check(api.cuDeviceTotalMem(&total, device), "cuDeviceTotalMem");
    info.total_memory = total;
    devices.push_back(std::move(info));
  }
  return devices;
}

} // namespace gpukit::rt
