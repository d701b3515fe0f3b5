// The DispatchController on a real GPU: results through every lane and
// through graph replay against a float64 reference, stream priorities per
// class, ordering through TaskScope, and the waiting policies (in-flight
// bound, BestEffort yielding, GPU-time pacing) measured with real kernels.
// Skipped (with the reason) where there is no GPU. The Runtime is a
// process-wide singleton and a CUDA context does not survive fork(), so the
// checks run as the DispatchGpuChild suite in a fresh process.

#include "runtime/driver_api.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/dispatch_controller.hpp"
#include "runtime/scheduler/gpu_backend.hpp"
#include "runtime/scheduler/graph.hpp"
#include "runtime/scheduler/scheduler.hpp"

#include "child_process.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

namespace gpukit::rt::sched {
namespace {

bool in_gpu_child() { return std::getenv("GPUKIT_TEST_GPU_CHILD") != nullptr; }

TEST(DispatchGpu, InAFreshProcess) {
  if (in_gpu_child())
    GTEST_SKIP() << "this is the child";
  if (!DriverApi::load())
    GTEST_SKIP() << "no GPU here: " << DriverApi::load_error();
  std::string output;
  int status = test::run_command("env GPUKIT_TEST_GPU_CHILD=1 GPUKIT_BACKEND=gpu '" + test::self_path() +
                                     "' --gtest_filter='DispatchGpuChild.*'",
                                 output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output.find("FAILED"), std::string::npos) << output;
  std::printf("%s", output.c_str());
}

constexpr const char* kSource = R"(
extern "C" __global__ void dispatch_step(float* __restrict__ x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + a;
}
extern "C" __global__ void dispatch_spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}
extern "C" __global__ void dispatch_set_after(float* out, const float* in, float add, unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
  out[0] = (in ? in[0] : 0.0f) + add;
}
)";

class DispatchGpuChild : public ::testing::Test {
protected:
  void SetUp() override {
    if (!in_gpu_child())
      GTEST_SKIP() << "runs only inside DispatchGpu.InAFreshProcess";
    Rt = &Runtime::get();
    ASSERT_TRUE(Rt->on_gpu()) << Rt->fallback_reason();
    Rt->make_current();
    Backend = std::make_unique<GpuBackend>(*Rt->driver(), Rt->context());
    Dispatch = std::make_unique<DispatchController>(*Backend, SteadyClock::instance(), &S,
                                                    DispatchOptions{.default_stream = Rt->stream()});
    Step = Rt->kernels().get({"dispatch_step", kSource}).function;
    Spin = Rt->kernels().get({"dispatch_spin", kSource}).function;
    SetAfter = Rt->kernels().get({"dispatch_set_after", kSource}).function;
  }
  void TearDown() override {
    Dispatch.reset();
    Backend.reset();
  }

  Task& running(TaskSpec spec) {
    TaskId id = S.submit(std::move(spec));
    S.start(id);
    return S.task(id);
  }
  void spin(Task* task, std::chrono::nanoseconds ns) {
    unsigned long long v = static_cast<unsigned long long>(ns.count());
    void* args[] = {&v};
    Dispatch->launch(task, Spin, {1}, {32}, 0, args);
  }

  Runtime* Rt = nullptr;
  Scheduler S{{.memory_capacity = uint64_t(1) << 30}};
  std::unique_ptr<GpuBackend> Backend;
  std::unique_ptr<DispatchController> Dispatch;
  CUfunction Step = nullptr, Spin = nullptr, SetAfter = nullptr;
};

/// 20 steps x = x * 0.5 + a_k over fresh random data, through `launch`,
/// compared with float64; returns the device result.
std::vector<float> run_steps(Runtime& rt, const std::function<void(CUdeviceptr, unsigned)>& launch_all,
                             const std::vector<float>& input, int repeats, const std::vector<float>& a) {
  unsigned n = static_cast<unsigned>(input.size());
  size_t bytes = n * sizeof(float);
  Allocation d = rt.allocator().allocate(bytes);
  rt.copy_to_device(d, input.data(), bytes);
  launch_all(d.device_ptr(), n);
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN()); // poisoned
  rt.copy_to_host(out.data(), d, bytes);
  rt.allocator().deallocate(d);
  double worst = 0;
  for (unsigned i = 0; i < n; ++i) {
    double ref = input[i];
    for (int r = 0; r < repeats; ++r)
      for (float ak : a)
        ref = ref * 0.5 + ak;
    double err = std::fabs(out[i] - ref) / std::max(1.0, std::fabs(ref));
    worst = std::isnan(out[i]) ? INFINITY : std::max(worst, err);
  }
  EXPECT_LT(worst, 1e-5) << "relative error against float64 (tolerance 1e-5)";
  return out;
}

TEST_F(DispatchGpuChild, EveryLaneAndGraphReplayComputeTheSame) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<float> input(100'000), a(20);
  for (float& v : input)
    v = dist(rng);
  for (float& v : a)
    v = dist(rng);
  unsigned grid = (100'000 + 255) / 256;
  auto steps_for = [&](Task* task) {
    return [&, task](CUdeviceptr x, unsigned n) {
      if (task)
        Dispatch->synchronize(nullptr); // the input was copied on the runtime's stream
      for (float ak : a) {
        void* args[] = {&x, &ak, &n};
        Dispatch->launch(task, Step, {grid}, {256}, 0, args);
      }
      Dispatch->synchronize(task);
    };
  };
  std::vector<float> reference = run_steps(*Rt, steps_for(nullptr), input, 1, a);
  for (QosClass qos : {QosClass::Guaranteed, QosClass::Burstable, QosClass::BestEffort}) {
    Task& t = running({.name = "lane", .qos = qos, .record_timing = qos == QosClass::Burstable});
    EXPECT_EQ(run_steps(*Rt, steps_for(&t), input, 1, a), reference) << to_string(qos);
    S.complete(t.id());
    EXPECT_EQ(t.counters().launches.load(), 20u);
  }
  // Capture once, replay three times; the same kernels in the same order
  // give the same bits as launching one by one.
  CUdeviceptr captured_x = 0;
  unsigned captured_n = 0;
  auto replay = [&](CUdeviceptr x, unsigned n) {
    captured_x = x;
    captured_n = n;
    GraphRecorder recorder(*Dispatch);
    for (float ak : a) {
      void* args[] = {&captured_x, &ak, &captured_n};
      Dispatch->launch(nullptr, Step, {grid}, {256}, 0, args);
    }
    LaunchGraph graph = recorder.finish();
    EXPECT_EQ(graph.kernels(), 20u);
    for (int r = 0; r < 3; ++r)
      graph.launch(nullptr);
  };
  std::vector<float> replayed = run_steps(*Rt, replay, input, 3, a);
  auto three_times = [&](CUdeviceptr x, unsigned n) {
    for (int r = 0; r < 3; ++r)
      for (float ak : a) {
        void* args[] = {&x, &ak, &n};
        Dispatch->launch(nullptr, Step, {grid}, {256}, 0, args);
      }
  };
  EXPECT_EQ(replayed, run_steps(*Rt, three_times, input, 3, a));
}

TEST_F(DispatchGpuChild, ClassesGetTheirStreamPriorities) {
  int least = 0, greatest = 0;
  ASSERT_EQ(Rt->driver()->cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
  EXPECT_EQ(Dispatch->priority_of(QosClass::Guaranteed), greatest);
  EXPECT_EQ(Dispatch->priority_of(QosClass::BestEffort), least);
  // cuStreamGetPriority is not in the driver table; the test looks it up itself.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto get_priority = reinterpret_cast<CUresult (*)(CUstream, int*)>(dlsym(lib, "cuStreamGetPriority"));
  ASSERT_NE(get_priority, nullptr);
  for (QosClass qos : {QosClass::Guaranteed, QosClass::Burstable, QosClass::BestEffort}) {
    Task& t = running({.name = "prio", .qos = qos});
    int priority = 1;
    ASSERT_EQ(get_priority(Dispatch->stream_for(&t), &priority), CUDA_SUCCESS);
    EXPECT_EQ(priority, Dispatch->priority_of(qos)) << to_string(qos);
    S.complete(t.id());
  }
}

TEST_F(DispatchGpuChild, TaskScopeOrdersWithTheRuntimesStream) {
  Allocation d = Rt->allocator().allocate(3 * sizeof(float));
  CUdeviceptr x = d.device_ptr(), y = x + 4, z = x + 8, none = 0;
  unsigned long long slow = 2'000'000, fast = 0;
  float one = 1, two = 2, three = 3;
  Task& t = running({.name = "scoped", .qos = QosClass::Guaranteed});
  {
    void* args[] = {&x, &none, &one, &slow}; // x = 1 after 2 ms, on the runtime's stream
    Dispatch->launch(nullptr, SetAfter, {1}, {1}, 0, args);
  }
  {
    TaskScope scope(*Dispatch, t);
    void* args[] = {&y, &x, &two, &fast}; // y = x + 2, on the task's stream
    Dispatch->launch(current_task(), SetAfter, {1}, {1}, 0, args);
  }
  {
    void* args[] = {&z, &y, &three, &fast}; // z = y + 3, back on the runtime's stream
    Dispatch->launch(nullptr, SetAfter, {1}, {1}, 0, args);
  }
  float out[3] = {NAN, NAN, NAN};
  Rt->copy_to_host(out, d, sizeof(out));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 3.0f);
  EXPECT_EQ(out[2], 6.0f);
  S.complete(t.id());
  Rt->allocator().deallocate(d);
}

TEST_F(DispatchGpuChild, BestEffortWaitsForGuaranteedKernels) {
  Task& g = running({.name = "g", .qos = QosClass::Guaranteed});
  Task& be = running({.name = "be", .qos = QosClass::BestEffort});
  spin(&g, std::chrono::milliseconds(3));
  spin(&be, std::chrono::microseconds(10));
  EXPECT_EQ(be.counters().holds.load(), 1u);
  EXPECT_GE(be.counters().held_ns.load(), 1'000'000) << "held while the 3 ms Guaranteed kernel ran";
  S.complete(g.id());
  S.complete(be.id());
}

TEST_F(DispatchGpuChild, BestEffortInFlightBound) {
  Task& be = running({.name = "be", .qos = QosClass::BestEffort});
  TimePoint start = SteadyClock::instance().now();
  for (int i = 0; i < 10; ++i)
    spin(&be, std::chrono::milliseconds(1));
  Nanos host = SteadyClock::instance().now() - start;
  // Four may be queued; the host waits for the first six to finish.
  EXPECT_GE(host, std::chrono::microseconds(5500));
  S.complete(be.id());
}

TEST_F(DispatchGpuChild, GpuSharePacingHoldsTheShare) {
  Task& t = running({.name = "paced", .pacing = PacingSpec::gpu_share(0.25, std::chrono::milliseconds(20))});
  TimePoint start = SteadyClock::instance().now();
  for (int i = 0; i < 40; ++i)
    spin(&t, std::chrono::microseconds(500));
  Dispatch->synchronize(&t);
  double wall = static_cast<double>((SteadyClock::instance().now() - start).count());
  double gpu = static_cast<double>(t.counters().gpu_ns.load());
  EXPECT_EQ(t.counters().timed_kernels.load(), 40u);
  EXPECT_NEAR(gpu / 40, 500e3, 100e3) << "measured per-kernel time";
  // The bucket starts full (5 ms of kernel time at a quarter of a 20 ms
  // window); beyond that the task gets a quarter of the wall time: 20 ms of
  // kernels take about (20 - 5) / 0.25 = 60 ms.
  double burst = 5e6;
  double steady_share = (gpu - burst) / wall;
  EXPECT_LE(steady_share, 0.25 * 1.15) << "wall " << wall / 1e6 << " ms, GPU " << gpu / 1e6 << " ms";
  EXPECT_GE(steady_share, 0.25 * 0.7) << "wall " << wall / 1e6 << " ms, GPU " << gpu / 1e6 << " ms";
  S.complete(t.id());
}

} // namespace
} // namespace gpukit::rt::sched
