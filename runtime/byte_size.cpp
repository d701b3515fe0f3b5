#include "runtime/byte_size.hpp"

#include <fmt/format.h>

#include <iterator>

namespace gpukit::rt {

std::string format_bytes(uint64_t bytes) {
  constexpr const char* Units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return fmt::format("{} bytes", bytes);
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(Units)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, Units[unit]);
}

} // namespace gpukit::rt
