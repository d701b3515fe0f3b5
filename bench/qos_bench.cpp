// qos_bench: does a Guaranteed task keep its latency while a BestEffort
// task floods the GPU with bulk kernels?
//
//   qos_bench [--requests=2000] [--gap-us=50] [--seconds=4] [--out=results.json]
//
// A latency-critical "request" is one small kernel, launched and waited for
// (an event recorded after it); its latency is the host time from the
// launch call to the event's completion. Requests come every --gap-us. A
// second thread launches bulk kernels (many short blocks, ~1 ms each) back
// to back. Scenarios:
//   alone        the Guaranteed task with nothing else running
//   scheduler    Guaranteed and BestEffort tasks through the dispatch
//                controller: priority streams, BestEffort held back while
//                Guaranteed work is in flight, BestEffort in-flight bound
//   priorities   the same streams, but BestEffort never held back
//   shared       the baseline: both on one default-priority stream
// Each scenario measures --requests requests or --seconds, whichever ends
// first. The target: scheduler p99 within 2x of alone.
//
// Needs a GPU; prints a table and writes one JSON object to --out.

#include "runtime/runtime.hpp"
#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/gpu_backend.hpp"
#include "runtime/scheduler/scheduler.hpp"
#include "runtime/scheduler/stats.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <thread>
#include <vector>

namespace cl = llvm::cl;
using namespace gpukit;
using namespace gpukit::rt;
using namespace gpukit::rt::sched;

static cl::opt<unsigned> Requests("requests", cl::desc("latency-critical requests per scenario"), cl::init(2000));
static cl::opt<unsigned> GapUs("gap-us", cl::desc("microseconds between requests"), cl::init(50));
static cl::opt<double> Seconds("seconds", cl::desc("time limit per scenario"), cl::init(4.0));
static cl::opt<unsigned> BulkIters("bulk-iters", cl::desc("dependent FMAs per bulk thread"), cl::init(2048));
static cl::opt<std::string> OutPath("out", cl::desc("write the results as one JSON object to this file"),
                                    cl::value_desc("path"));

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void qos_tiny(float* __restrict__ x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.999f + 1.0f;
}
// One element per thread and many blocks: each block is short (a few us),
// so a higher-priority kernel finds free SM slots quickly.
extern "C" __global__ void qos_bulk(float* __restrict__ y, unsigned n, int iters) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = y[i];
  for (int k = 0; k < iters; ++k) v = v * 0.9999f + 0.0001f;
  y[i] = v;
}
)";

constexpr unsigned kTinyN = 4096;
constexpr unsigned kBulkN = 1u << 24;

struct Scenario {
  std::string name;
  Summary latency;
  size_t samples = 0;
  double bulk_per_second = 0;
  uint64_t holds = 0;
};

} // namespace

int main(int argc, char** argv) {
  cl::ParseCommandLineOptions(argc, argv, "GPUkit QoS: Guaranteed latency under a BestEffort flood\n");
  try {
    Runtime& rt = Runtime::get();
    if (!rt.on_gpu()) {
      llvm::errs() << "qos_bench needs a GPU: " << rt.fallback_reason() << "\n";
      return 2;
    }
    rt.make_current();
    GpuBackend backend(*rt.driver(), rt.context());
    CUfunction tiny = rt.kernels().get({"qos_tiny", kSource}).function;
    CUfunction bulk = rt.kernels().get({"qos_bulk", kSource}).function;
    Allocation small = rt.allocator().allocate(kTinyN * sizeof(float));
    Allocation big = rt.allocator().allocate(size_t(kBulkN) * sizeof(float));
    std::vector<float> zeros(kBulkN, 0.0f);
    rt.copy_to_device(small, zeros.data(), kTinyN * sizeof(float));
    rt.copy_to_device(big, zeros.data(), size_t(kBulkN) * sizeof(float));
    CUdeviceptr px = small.device_ptr(), py = big.device_ptr();
    unsigned tiny_n = kTinyN, bulk_n = kBulkN;
    int iters = static_cast<int>(BulkIters);

    auto run = [&](const std::string& name, bool flood, bool shared_stream, bool hold_back) {
      Scheduler scheduler({.memory_capacity = rt.device()->total_memory});
      CUstream shared = backend.create_stream(backend.stream_priorities().least);
      DispatchOptions options{.default_stream = shared};
      if (!hold_back)
        options.best_effort_max_hold = Nanos(0);
      auto dispatch = std::make_unique<DispatchController>(backend, SteadyClock::instance(), &scheduler, options);
      auto start_task = [&](TaskSpec spec) {
        TaskId id = scheduler.submit(std::move(spec));
        scheduler.start(id);
        return &scheduler.task(id);
      };
      // In the shared baseline neither launch names a task: both take the
      // default lane, one stream at the default priority, no policy.
      Task* g = shared_stream ? nullptr : start_task({.name = "latency", .qos = QosClass::Guaranteed});
      Task* be = shared_stream ? nullptr : start_task({.name = "bulk", .qos = QosClass::BestEffort});
      CUstream g_stream = dispatch->stream_for(g);
      CUevent done = backend.create_event(false);

      std::atomic<bool> stop{false};
      std::atomic<uint64_t> bulk_launched{0};
      std::thread flooder;
      if (flood) {
        flooder = std::thread([&] {
          rt.make_current();
          // The baseline's flooder bounds its own queue as a sane program
          // would (8 kernels), so a request waits behind at most that many.
          CUevent marker = backend.create_event(false);
          void* args[] = {&py, &bulk_n, &iters};
          while (!stop.load(std::memory_order_relaxed)) {
            dispatch->launch(be, bulk, {(kBulkN + 255) / 256}, {256}, 0, args);
            uint64_t n = bulk_launched.fetch_add(1) + 1;
            if (shared_stream && n % 8 == 0) {
              backend.record(marker, shared);
              backend.wait(marker);
            }
          }
          backend.destroy_event(marker);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(50)); // let the flood fill the GPU
      }
      auto request = [&] {
        void* args[] = {&px, &tiny_n};
        TimePoint start = SteadyClock::instance().now();
        dispatch->launch(g, tiny, {(kTinyN + 255) / 256}, {256}, 0, args);
        backend.record(done, g_stream);
        backend.wait(done);
        return SteadyClock::instance().now() - start;
      };
      for (int i = 0; i < 50; ++i) // warm-up
        request();
      std::vector<Nanos> latencies;
      uint64_t bulk_before = bulk_launched.load();
      TimePoint begin = SteadyClock::instance().now();
      Nanos limit(static_cast<int64_t>(Seconds * 1e9));
      while (latencies.size() < Requests && SteadyClock::instance().now() - begin < limit) {
        latencies.push_back(request());
        SteadyClock::instance().sleep_for(std::chrono::microseconds(GapUs));
      }
      double elapsed = static_cast<double>((SteadyClock::instance().now() - begin).count()) / 1e9;
      uint64_t bulk_count = bulk_launched.load() - bulk_before;
      stop = true;
      if (flooder.joinable())
        flooder.join();
      Scenario s;
      s.name = name;
      s.samples = latencies.size();
      s.latency = summarize(std::move(latencies));
      s.bulk_per_second = static_cast<double>(bulk_count) / elapsed;
      s.holds = be ? be->counters().holds.load() : 0;
      dispatch->synchronize(nullptr);
      backend.destroy_event(done);
      dispatch.reset();
      backend.destroy_stream(shared);
      return s;
    };

    std::vector<Scenario> scenarios = {
        run("alone", false, false, true),
        run("scheduler", true, false, true),
        run("priorities", true, false, false),
        run("shared", true, true, false),
    };
    rt.allocator().deallocate(small);
    rt.allocator().deallocate(big);

    const Scenario& alone = scenarios[0];
    auto us = [](Nanos n) { return static_cast<double>(n.count()) / 1e3; };
    llvm::outs() << fmt::format("device: {} ({}); Guaranteed request = {} threads, BestEffort bulk = {} threads x "
                                "{} FMAs\n\n",
                                rt.device()->name, rt.arch(), kTinyN, kBulkN, unsigned(BulkIters));
    llvm::outs() << fmt::format("{:<12} {:>8} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8}\n", "scenario", "samples",
                                "p50 us", "p99 us", "max us", "p99/alone", "bulk/s", "holds");
    for (const Scenario& s : scenarios)
      llvm::outs() << fmt::format("{:<12} {:>8} {:>10.1f} {:>10.1f} {:>10.1f} {:>12.2f} {:>12.1f} {:>8}\n", s.name,
                                  s.samples, us(s.latency.p50), us(s.latency.p99), us(s.latency.max),
                                  us(s.latency.p99) / us(alone.latency.p99), s.bulk_per_second, s.holds);
    double ratio = us(scenarios[1].latency.p99) / us(alone.latency.p99);
    llvm::outs() << fmt::format("\ntarget: scheduler p99 within 2x of alone: {:.2f}x, {}\n", ratio,
                                ratio <= 2.0 ? "met" : "NOT met");

    if (!OutPath.empty()) {
      llvm::json::Array rows;
      for (const Scenario& s : scenarios)
        rows.push_back(llvm::json::Object{{"scenario", s.name},
                                          {"samples", static_cast<int64_t>(s.samples)},
                                          {"p50_us", us(s.latency.p50)},
                                          {"p99_us", us(s.latency.p99)},
                                          {"max_us", us(s.latency.max)},
                                          {"p99_vs_alone", us(s.latency.p99) / us(alone.latency.p99)},
                                          {"bulk_per_second", s.bulk_per_second},
                                          {"best_effort_holds", static_cast<int64_t>(s.holds)}});
      llvm::json::Object out{{"bench", "qos"},
                             {"device", rt.device()->name},
                             {"gap_us", static_cast<int64_t>(GapUs)},
                             {"bulk_iters", static_cast<int64_t>(BulkIters)},
                             {"scenarios", std::move(rows)},
                             {"scheduler_p99_vs_alone", ratio},
                             {"target_met", ratio <= 2.0}};
      std::error_code ec;
      llvm::raw_fd_ostream file(OutPath, ec);
      if (ec)
        throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", std::string(OutPath), ec.message()));
      file << llvm::json::Value(std::move(out)) << "\n";
    }
    return 0;
  } catch (const Error& e) {
    llvm::errs() << "qos_bench: " << e.what() << "\n";
    return 1;
  }
}
