// Scheduling: the scheduler, a dispatch backend and the dispatch controller,
// owned together and destroyed in the right order (controller first). This
// is what the Runtime holds to route its launches through tasks.
//
//   auto s = Scheduling::on_gpu(api, rt.context(), rt.stream(), pool.quota());
//   s->dispatch().launch(current_task(), kernel.function, shape, args);
//   s->scheduler().print_stats(llvm::outs());
//
// on_cpu() builds the same stack over the simulation backend for the CPU
// fallback: work is ordered and accounted through launch_host().
#pragma once

#include "runtime/scheduler/dispatch_backend.hpp"
#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/scheduler.hpp"

#include <memory>

namespace gpukit::rt {
struct DriverApi;
}

namespace gpukit::rt::sched {

class SimBackend;

class Scheduling {
public:
  /// The GPU stack: launches without a task go to `stream` (the runtime's),
  /// tasks are admitted against `memory_capacity` (the memory pool's quota).
  static std::unique_ptr<Scheduling> on_gpu(const DriverApi& api, CUcontext context, CUstream stream,
                                            uint64_t memory_capacity, DispatchOptions options = {});
  /// The CPU fallback's stack, on `clock` (nullptr: SteadyClock).
  static std::unique_ptr<Scheduling> on_cpu(uint64_t memory_capacity, Clock* clock = nullptr,
                                            DispatchOptions options = {});
  ~Scheduling();

  Scheduler& scheduler() { return *Sched; }
  DispatchController& dispatch() { return *Dispatch; }
  DispatchBackend& backend() { return *Backend; }
  /// The simulation backend on the CPU fallback, else nullptr.
  SimBackend* simulation() { return Sim; }

private:
  Scheduling() = default;

  // Declaration order is destruction order reversed: the controller goes
  // first (it drains lanes through the backend and observes the scheduler).
  std::unique_ptr<DispatchBackend> Backend;
  SimBackend* Sim = nullptr;
  std::unique_ptr<Scheduler> Sched;
  std::unique_ptr<DispatchController> Dispatch;
};

} // namespace gpukit::rt::sched
