#include "runtime/scheduler/scheduling.hpp"

#include "runtime/scheduler/gpu_backend.hpp"
#include "runtime/scheduler/sim_backend.hpp"

namespace gpukit::rt::sched {

std::unique_ptr<Scheduling> Scheduling::on_gpu(const DriverApi& api, CUcontext context, CUstream stream,
                                               uint64_t memory_capacity, DispatchOptions options) {
  std::unique_ptr<Scheduling> s(new Scheduling());
  s->Backend = std::make_unique<GpuBackend>(api, context);
  s->Sched = std::make_unique<Scheduler>(SchedulerOptions{.memory_capacity = memory_capacity});
  options.default_stream = stream;
  s->Dispatch = std::make_unique<DispatchController>(*s->Backend, SteadyClock::instance(), s->Sched.get(), options);
  return s;
}

std::unique_ptr<Scheduling> Scheduling::on_cpu(uint64_t memory_capacity, Clock* clock, DispatchOptions options) {
  Clock& c = clock ? *clock : SteadyClock::instance();
  std::unique_ptr<Scheduling> s(new Scheduling());
  auto sim = std::make_unique<SimBackend>(c);
  s->Sim = sim.get();
  options.default_stream = sim->default_stream();
  s->Backend = std::move(sim);
  s->Sched = std::make_unique<Scheduler>(SchedulerOptions{.memory_capacity = memory_capacity, .clock = &c});
  s->Dispatch = std::make_unique<DispatchController>(*s->Backend, c, s->Sched.get(), options);
  return s;
}

Scheduling::~Scheduling() {
  Dispatch.reset();
  Sched.reset();
  Backend.reset();
}

} // namespace gpukit::rt::sched
