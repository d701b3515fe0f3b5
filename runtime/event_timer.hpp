// EventTimer: times GPU work with a pair of CUDA events, the way benchmarks
// and the autotuner must (host clocks see only the launch, not the kernel).
//
//   rt::EventTimer timer(rt::Runtime::get());
//   timer.start();
//   out = 2.0f * x + sin(y);
//   double ms = timer.stop_ms();   // waits for the stop event
//
// Events are recorded on the runtime's stream unless another is given.
// Unavailable (Error{Unavailable}) on the CPU fallback.
#pragma once

#include <cuda.h>

namespace gpukit::rt {

class Runtime;

class EventTimer {
public:
  explicit EventTimer(Runtime& runtime);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Records the start event on `stream` (nullptr: the runtime's stream).
  void start(CUstream stream = nullptr);
  /// Records the stop event on the same stream, waits for it and returns the
  /// milliseconds between the two events.
  double stop_ms();

private:
  Runtime& Rt;
  CUstream Stream = nullptr;
  CUevent Start = nullptr;
  CUevent Stop = nullptr;
};

} // namespace gpukit::rt
