#include "runtime/scheduler/units.hpp"

#include <fmt/format.h>

namespace gpukit::rt::sched {

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string format_duration(Nanos duration) {
  int64_t ns = duration.count();
  if (ns < 0)
    return fmt::format("-{}", format_duration(Nanos(-ns)));
  if (ns < 1'000)
    return fmt::format("{} ns", ns);
  if (ns < 1'000'000)
    return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  if (ns < 1'000'000'000)
    return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

} // namespace gpukit::rt::sched
