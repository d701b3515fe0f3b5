// Human-readable byte counts and durations for the scheduler's messages,
// explain() and statistics tables. One decimal, binary units, so numbers in
// messages line up with what nvidia-smi and the memory pool print.
//
//   format_bytes(6442450944)               // "6.0 GiB"
//   format_duration(Nanos(1'500'000))       // "1.50 ms"
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpukit::rt::sched {

using Nanos = std::chrono::nanoseconds;

/// "512 B", "1.5 KiB", "6.0 GiB".
std::string format_bytes(uint64_t bytes);
/// "850 ns", "12.3 us", "1.50 ms", "2.25 s" (negative durations keep their sign).
std::string format_duration(Nanos duration);

} // namespace gpukit::rt::sched
