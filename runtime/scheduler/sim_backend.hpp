// SimBackend: the DispatchBackend of the CPU simulation. A "kernel" is a
// host callback registered with add_kernel(); launching it runs the callback
// at once and occupies its stream for a simulated duration, so events,
// in-flight bounds, timing and pacing behave as on a GPU, on whatever Clock
// the scheduler uses. With a ManualClock every policy decision is
// deterministic; with SteadyClock a kernel's duration is its host run time
// (the CPU fallback's case).
//
//   ManualClock clock;
//   SimBackend sim(clock);
//   CUfunction k = sim.add_kernel("bulk", [](void**) {}, std::chrono::milliseconds(2));
//   DispatchController dispatch(sim, clock, &scheduler);
//
// What it does not model: streams contending for the device (each stream
// runs its work back to back, independent of the others) and priorities
// (recorded in the history, not simulated).
#pragma once

#include "runtime/scheduler/dispatch_backend.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpukit::rt::sched {

class SimBackend final : public DispatchBackend {
public:
  explicit SimBackend(Clock& clock, StreamPriorities priorities = {0, -5});
  ~SimBackend() override;

  /// Registers a kernel: launching it calls `body(args)` and keeps its
  /// stream busy for `duration` (0: for as long as `body` took on the
  /// clock). `arg_sizes` are the sizes of the pointees of `args`, which
  /// graph capture copies as cuLaunchKernel does.
  CUfunction add_kernel(std::string name, std::function<void(void** args)> body, Nanos duration = Nanos(0),
                        std::vector<size_t> arg_sizes = {});

  /// A stream at the least priority, owned by the backend: the simulated
  /// counterpart of the runtime's stream.
  CUstream default_stream() const { return Default; }
  int priority_of(CUstream stream) const;
  /// When the work ordered on `stream` so far will have finished.
  TimePoint busy_until(CUstream stream) const;

  /// One launch, as the simulation ran it.
  struct LaunchRecord {
    std::string kernel; ///< "<host>" for launch_host
    CUstream stream = nullptr;
    int priority = 0;
    TimePoint issued{}; ///< clock time of the launch call
    TimePoint start{};  ///< when its stream reached it
    TimePoint end{};
    bool from_graph = false;
  };
  /// Launches in issue order (kept only while keep_history(true), the default).
  std::vector<LaunchRecord> history() const;
  void keep_history(bool keep);
  void clear_history();
  uint64_t launch_count() const;

  std::string_view name() const override { return "simulation"; }
  StreamPriorities stream_priorities() override { return Priorities; }
  CUstream create_stream(int priority) override;
  void destroy_stream(CUstream stream) noexcept override;
  CUevent create_event(bool timing) override;
  void destroy_event(CUevent event) noexcept override;
  void record(CUevent event, CUstream stream) override;
  bool query(CUevent event) override;
  void wait(CUevent event) override;
  void stream_wait(CUstream stream, CUevent event) override;
  bool query_stream(CUstream stream) override;
  Nanos elapsed(CUevent start, CUevent end) override;
  void synchronize(CUstream stream) override;
  void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream,
              void** args) override;
  void launch_host(CUstream stream, llvm::function_ref<void()> work) override;
  void begin_capture(CUstream stream) override;
  CUgraphExec end_capture(CUstream stream) override;
  void abort_capture(CUstream stream) noexcept override;
  void launch_graph(CUgraphExec graph, CUstream stream) override;
  void destroy_graph(CUgraphExec graph) noexcept override;

  struct Kernel;
  struct Stream;
  struct Event;
  struct Graph;

private:
  Stream& stream_of(CUstream stream) const;
  /// Runs `kernel` on `stream` now; `args` as for launch().
  void run(const Kernel& kernel, Stream& stream, void** args, bool from_graph);

  Clock& Clk;
  StreamPriorities Priorities;
  mutable std::mutex Mutex;
  std::vector<std::unique_ptr<Kernel>> Kernels;
  std::vector<std::unique_ptr<Stream>> Streams;
  CUstream Default = nullptr;
  std::vector<LaunchRecord> History;
  bool KeepHistory = true;
  uint64_t Launches = 0;
};

} // namespace gpukit::rt::sched
