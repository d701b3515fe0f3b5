// format_bytes: sizes in messages, "1.50 GiB", "256 bytes".
#pragma once

#include <cstdint>
#include <string>

namespace gpukit::rt {

/// "1.50 GiB", "256 bytes": sizes in messages.
std::string format_bytes(uint64_t bytes);

} // namespace gpukit::rt
