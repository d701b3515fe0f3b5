// dispatch_bench: what the DispatchController's launch path costs over a
// bare cuLaunchKernel, and what graph replay of a 20-kernel sequence costs
// per kernel against launching the kernels one by one.
//
//   dispatch_bench [--launches=100000] [--batches=9] [--out=results.json]
//
// Launch overhead: an empty kernel, --launches per batch, host time with
// steady_clock around the loop and a synchronize at its end; the median of
// --batches batches per mode. "loop only" times the same loop without the
// synchronize (a smaller batch, so the driver's queue never fills and the
// GPU's pace cannot hide the host's). Graph: a 20-kernel sequence of tiny
// kernels, host time per kernel and GPU time per kernel (CUDA events around
// 100 sequences), launched one by one and replayed as a graph.
//
// Needs a GPU; prints a table and writes one JSON object to --out.

#include "runtime/driver_api.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/gpu_backend.hpp"
#include "runtime/scheduler/graph.hpp"
#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/stats.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <vector>

namespace cl = llvm::cl;
using namespace gpukit;
using namespace gpukit::rt;
using namespace gpukit::rt::sched;

static cl::opt<unsigned> Launches("launches", cl::desc("launches per batch"), cl::init(100000));
static cl::opt<unsigned> Batches("batches", cl::desc("batches per mode (the median is reported)"), cl::init(9));
static cl::opt<std::string> OutPath("out", cl::desc("write the results as one JSON object to this file"),
                                    cl::value_desc("path"));

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void bench_empty() {}
extern "C" __global__ void bench_tiny(float* x, float a) { x[threadIdx.x] = x[threadIdx.x] * 0.5f + a; }
)";

double ns_since(TimePoint start) {
  return static_cast<double>((SteadyClock::instance().now() - start).count());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct LaunchMode {
  std::string name;
  double with_sync_ns = 0; ///< per launch, loop + synchronize
  double loop_ns = 0;      ///< per launch, loop only (queue never full)
};

} // namespace

int main(int argc, char** argv) {
  cl::ParseCommandLineOptions(argc, argv, "GPUkit dispatch controller overhead and graph replay\n");
  try {
    Runtime& rt = Runtime::get();
    if (!rt.on_gpu()) {
      llvm::errs() << "dispatch_bench needs a GPU: " << rt.fallback_reason() << "\n";
      return 2;
    }
    rt.make_current();
    const DriverApi& api = *rt.driver();
    GpuBackend backend(api, rt.context());
    Scheduler scheduler({.memory_capacity = rt.device()->total_memory});
    CUstream stream = backend.create_stream(backend.stream_priorities().least);
    auto dispatch = std::make_unique<DispatchController>(backend, SteadyClock::instance(), &scheduler,
                                                         DispatchOptions{.default_stream = stream});
    CUfunction empty = rt.kernels().get({"bench_empty", kSource}).function;
    CUfunction tiny = rt.kernels().get({"bench_tiny", kSource}).function;

    auto start_task = [&](TaskSpec spec) {
      TaskId id = scheduler.submit(std::move(spec));
      scheduler.start(id);
      return &scheduler.task(id);
    };
    Task* burstable = start_task({.name = "burstable"});
    Task* guaranteed = start_task({.name = "guaranteed", .qos = QosClass::Guaranteed});
    Task* timed = start_task({.name = "timed", .record_timing = true});

    // The bare launch is the baseline the target is stated against; it is
    // the one raw driver call outside runtime/, made on purpose.
    auto bare = [&](CUstream s) {
      check(api.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr), "cuLaunchKernel");
    };
    struct Mode {
      std::string name;
      std::function<void()> launch;
      std::function<void()> sync;
    };
    std::vector<Mode> modes = {
        {"bare cuLaunchKernel", [&] { bare(stream); }, [&] { backend.synchronize(stream); }},
        {"dispatch, no task", [&] { dispatch->launch(nullptr, empty, {1}, {32}, 0, nullptr); },
         [&] { dispatch->synchronize(nullptr); }},
        {"dispatch, Burstable task", [&] { dispatch->launch(burstable, empty, {1}, {32}, 0, nullptr); },
         [&] { dispatch->synchronize(burstable); }},
        {"dispatch, Guaranteed task", [&] { dispatch->launch(guaranteed, empty, {1}, {32}, 0, nullptr); },
         [&] { dispatch->synchronize(guaranteed); }},
        {"dispatch, timed task", [&] { dispatch->launch(timed, empty, {1}, {32}, 0, nullptr); },
         [&] { dispatch->synchronize(timed); }},
    };

    std::vector<LaunchMode> results;
    for (Mode& mode : modes) {
      for (unsigned i = 0; i < 2000; ++i) // warm-up
        mode.launch();
      mode.sync();
      std::vector<double> with_sync, loop_only;
      // Interleave the two measurements so clock drift hits both alike.
      for (unsigned b = 0; b < Batches; ++b) {
        TimePoint start = SteadyClock::instance().now();
        for (unsigned i = 0; i < Launches; ++i)
          mode.launch();
        mode.sync();
        with_sync.push_back(ns_since(start) / Launches);
        constexpr unsigned kShort = 500; // well inside the driver's queue
        double total = 0;
        for (unsigned rep = 0; rep < 20; ++rep) {
          mode.sync();
          TimePoint loop_start = SteadyClock::instance().now();
          for (unsigned i = 0; i < kShort; ++i)
            mode.launch();
          total += ns_since(loop_start);
        }
        mode.sync();
        loop_only.push_back(total / (20.0 * kShort));
      }
      results.push_back({mode.name, median(with_sync), median(loop_only)});
    }

    // Graph replay: 20 tiny kernels per sequence.
    constexpr int kSeq = 20, kReps = 100;
    Allocation buffer = rt.allocator().allocate(32 * sizeof(float));
    CUdeviceptr x = buffer.device_ptr();
    std::vector<float> a(kSeq);
    for (int k = 0; k < kSeq; ++k)
      a[k] = 0.01f * static_cast<float>(k);
    auto one_by_one = [&] {
      for (int k = 0; k < kSeq; ++k) {
        void* args[] = {&x, &a[k]};
        dispatch->launch(nullptr, tiny, {1}, {32}, 0, args);
      }
    };
    LaunchGraph graph;
    {
      GraphRecorder recorder(*dispatch);
      one_by_one();
      graph = recorder.finish();
    }
    CUevent before = backend.create_event(true), after = backend.create_event(true);
    struct GraphResult {
      std::string name;
      double host_ns = 0; ///< per kernel
      double gpu_ns = 0;  ///< per kernel
    };
    auto measure = [&](std::string name, const std::function<void()>& sequence) {
      for (int i = 0; i < 20; ++i)
        sequence();
      dispatch->synchronize(nullptr);
      std::vector<double> host, gpu;
      for (unsigned b = 0; b < Batches; ++b) {
        TimePoint start = SteadyClock::instance().now();
        backend.record(before, stream);
        for (int r = 0; r < kReps; ++r)
          sequence();
        backend.record(after, stream);
        backend.wait(after);
        host.push_back(ns_since(start) / (kReps * kSeq));
        gpu.push_back(static_cast<double>(backend.elapsed(before, after).count()) / (kReps * kSeq));
      }
      return GraphResult{std::move(name), median(host), median(gpu)};
    };
    std::vector<GraphResult> graph_results = {
        measure("20 launches one by one", one_by_one),
        measure("graph replay", [&] { graph.launch(nullptr); }),
    };
    graph = LaunchGraph();
    backend.destroy_event(before);
    backend.destroy_event(after);
    rt.allocator().deallocate(buffer);

    // Report.
    const LaunchMode& base = results.front();
    llvm::outs() << fmt::format("device: {} ({}), {} launches x {} batches, median per launch\n\n",
                                rt.device()->name, rt.arch(), unsigned(Launches), unsigned(Batches));
    llvm::outs() << fmt::format("{:<28} {:>14} {:>14} {:>14} {:>14}\n", "mode", "w/ sync ns", "overhead ns",
                                "loop-only ns", "overhead ns");
    for (const LaunchMode& m : results)
      llvm::outs() << fmt::format("{:<28} {:>14.1f} {:>+14.1f} {:>14.1f} {:>+14.1f}\n", m.name, m.with_sync_ns,
                                  m.with_sync_ns - base.with_sync_ns, m.loop_ns, m.loop_ns - base.loop_ns);
    llvm::outs() << fmt::format("\n{}-kernel sequence x {} reps, median of {} batches, per kernel\n", kSeq, kReps,
                                unsigned(Batches));
    llvm::outs() << fmt::format("{:<28} {:>14} {:>14}\n", "mode", "host ns", "GPU ns");
    for (const GraphResult& g : graph_results)
      llvm::outs() << fmt::format("{:<28} {:>14.1f} {:>14.1f}\n", g.name, g.host_ns, g.gpu_ns);

    if (!OutPath.empty()) {
      llvm::json::Array launch_rows, graph_rows;
      for (const LaunchMode& m : results)
        launch_rows.push_back(llvm::json::Object{{"mode", m.name},
                                                 {"per_launch_with_sync_ns", m.with_sync_ns},
                                                 {"overhead_with_sync_ns", m.with_sync_ns - base.with_sync_ns},
                                                 {"per_launch_loop_ns", m.loop_ns},
                                                 {"overhead_loop_ns", m.loop_ns - base.loop_ns}});
      for (const GraphResult& g : graph_results)
        graph_rows.push_back(
            llvm::json::Object{{"mode", g.name}, {"host_ns_per_kernel", g.host_ns}, {"gpu_ns_per_kernel", g.gpu_ns}});
      llvm::json::Object out{{"bench", "dispatch"},
                             {"device", rt.device()->name},
                             {"launches_per_batch", static_cast<int64_t>(Launches)},
                             {"batches", static_cast<int64_t>(Batches)},
                             {"launch", std::move(launch_rows)},
                             {"graph_sequence_kernels", kSeq},
                             {"graph", std::move(graph_rows)}};
      std::error_code ec;
      llvm::raw_fd_ostream file(OutPath, ec);
      if (ec)
        throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", std::string(OutPath), ec.message()));
      file << llvm::json::Value(std::move(out)) << "\n";
    }
    dispatch.reset();
    backend.destroy_stream(stream);
    return 0;
  } catch (const Error& e) {
    llvm::errs() << "dispatch_bench: " << e.what() << "\n";
    return 1;
  }
}
