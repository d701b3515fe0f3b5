#include "runtime/event_timer.hpp"

#include "runtime/driver_api.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::rt {

EventTimer::EventTimer(Runtime& runtime) : Rt(runtime) {
  if (!Rt.on_gpu())
    throw Error(ErrorKind::Unavailable,
                fmt::format("GPU timing needs a GPU: {}", Rt.fallback_reason()));
  Rt.make_current();
  check(Rt.driver()->cuEventCreate(&Start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(Rt.driver()->cuEventCreate(&Stop, CU_EVENT_DEFAULT), "cuEventCreate");
}

EventTimer::~EventTimer() {
  Rt.make_current();
  // Destructors must not throw: a failing destroy leaks one event at worst.
  if (Start)
    (void)Rt.driver()->cuEventDestroy(Start);
  if (Stop)
    (void)Rt.driver()->cuEventDestroy(Stop);
}

void EventTimer::start(CUstream stream) {
  Stream = stream ? stream : Rt.stream();
  Rt.make_current();
  check(Rt.driver()->cuEventRecord(Start, Stream), "cuEventRecord");
}

double EventTimer::stop_ms() {
  Rt.make_current();
  const DriverApi& cu = *Rt.driver();
  check(cu.cuEventRecord(Stop, Stream), "cuEventRecord");
  check(cu.cuEventSynchronize(Stop), "cuEventSynchronize");
  float ms = 0;
  check(cu.cuEventElapsedTime(&ms, Start, Stop), "cuEventElapsedTime");
  return ms;
}

} // namespace gpukit::rt
