// memory_bench: the memory pool and the transfer engine on a GPU, against the
// driver's own allocators and copies, in one run.
//
//   memory_bench [results.json]
//
// Prints three tables: (1) allocate+free pair latency for the pool's cached
// path, cuMemAlloc/cuMemFree and cuMemAllocAsync/cuMemFreeAsync (stream-
// ordered, default pool kept warm); (2) 256 MiB host<->device bandwidth,
// pinned vs pageable, through the engine and through plain cuMemcpy; (3) a
// copy overlapping a kernel. Without a GPU it says why and exits 0.
#include "runtime/byte_size.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/driver_handles.hpp"
#include "runtime/memory_backend_driver.hpp"
#include "runtime/memory_pool.hpp"
#include "runtime/size_classes.hpp"
#include "runtime/transfer_engine.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace gpukit::rt {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Median over `reps` runs of `run` (after one warm-up), in seconds.
double time_median(int reps, const std::function<void()>& run) {
  run();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto start = Clock::now();
    run();
    times.push_back(seconds_since(start));
  }
  return median(times);
}

struct Gpu {
  explicit Gpu(const DriverApi& driver) : api(driver) {}
  const DriverApi& api;
  CUdevice device = 0;
  PrimaryContext context;
  Stream stream;
  int sm_count = 0;
  std::string name;
};

// 1. Allocation pairs --------------------------------------------------------------

/// Nanoseconds per allocate+free pair: `pairs` pairs, median of 5 runs.
double ns_per_pair(int pairs, const std::function<void()>& pair, const std::function<void()>& flush) {
  double s = time_median(5, [&] {
    for (int i = 0; i < pairs; ++i)
      pair();
    flush();
  });
  return s / pairs * 1e9;
}

/// cuMemAllocAsync's default pool returns memory to the driver at every
/// synchronisation unless its release threshold is raised; the table lacks
/// the pool entry points, so they are looked up here.
bool keep_default_mem_pool_warm(CUdevice device) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!library)
    return false;
  auto get_pool = reinterpret_cast<decltype(&cuDeviceGetDefaultMemPool)>(
      dlsym(library, "cuDeviceGetDefaultMemPool"));
  auto set_attribute =
      reinterpret_cast<decltype(&cuMemPoolSetAttribute)>(dlsym(library, "cuMemPoolSetAttribute"));
  CUmemoryPool pool = nullptr;
  if (!get_pool || !set_attribute || get_pool(&pool, device) != CUDA_SUCCESS)
    return false;
  cuuint64_t threshold = UINT64_MAX;
  return set_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) == CUDA_SUCCESS;
}

llvm::json::Array bench_allocation(Gpu& gpu) {
  const DriverApi& api = gpu.api;
  CUstream stream = gpu.stream.get();
  std::unique_ptr<MemoryPool> pool = make_device_pool(api, stream, 0);
  bool warm = keep_default_mem_pool_warm(gpu.device);

  fmt::print("\n(1) allocate + free, one pair at a time, ns per pair (median of 5 runs)\n");
  if (!warm)
    fmt::print("    note: could not raise the default memory pool's release threshold\n");
  fmt::print("{:>10} | {:>12} | {:>18} | {:>24}\n", "size", "MemoryPool", "cuMemAlloc+Free",
             "cuMemAllocAsync+FreeAsync");
  llvm::json::Array rows;
  for (size_t bytes : {size_t(256), 4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB}) {
    Allocation keep = pool->allocate(bytes, stream); // a warm cache entry
    pool->deallocate(keep, stream);
    double pooled = ns_per_pair(
        100000,
        [&] {
          Allocation a = pool->allocate(bytes, stream);
          pool->deallocate(a, stream);
        },
        [] {});
    int driver_pairs = bytes >= 16 * MiB ? 200 : 2000;
    double driver = ns_per_pair(
        driver_pairs,
        [&] {
          CUdeviceptr p = 0;
          check(api.cuMemAlloc(&p, bytes), "cuMemAlloc");
          check(api.cuMemFree(p), "cuMemFree");
        },
        [] {});
    double async = ns_per_pair(
        20000,
        [&] {
          CUdeviceptr p = 0;
          check(api.cuMemAllocAsync(&p, bytes, stream), "cuMemAllocAsync");
          check(api.cuMemFreeAsync(p, stream), "cuMemFreeAsync");
        },
        [&] { check(api.cuStreamSynchronize(stream), "cuStreamSynchronize"); });
    fmt::print("{:>10} | {:>12.1f} | {:>18.1f} | {:>24.1f}\n", format_bytes(bytes), pooled, driver,
               async);
    rows.push_back(llvm::json::Object{{"bytes", static_cast<int64_t>(bytes)},
                                      {"pool_ns", pooled},
                                      {"cuMemAlloc_ns", driver},
                                      {"cuMemAllocAsync_ns", async}});
  }
  MemoryPoolStats s = pool->stats();
  fmt::print("pool: {}\n", s.summary());

  // Several threads, each on its own stream, sharing the pool.
  fmt::print("\n    MemoryPool, 4 KiB pairs from several threads (ns per pair, all threads)\n");
  for (unsigned threads : {1u, 2u, 4u, 8u}) {
    constexpr int kPairs = 200000;
    std::vector<Stream> streams;
    for (unsigned t = 0; t < threads; ++t)
      streams.emplace_back(api, gpu.context.get());
    auto start = Clock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        CUstream s = streams[t].get();
        for (int i = 0; i < kPairs; ++i) {
          Allocation a = pool->allocate(4 * KiB, s);
          pool->deallocate(a, s);
        }
      });
    for (auto& w : workers)
      w.join();
    double ns = seconds_since(start) / (double(kPairs) * threads) * 1e9;
    for (const Stream& s : streams)
      pool->retire_stream(s.get()); // before the streams go
    fmt::print("    {} thread{}: {:.1f} ns per pair ({:.1f} ns per thread)\n", threads,
               threads == 1 ? "" : "s", ns, ns * threads);
    rows.push_back(llvm::json::Object{{"bytes", 4096}, {"threads", threads}, {"pool_ns", ns}});
  }
  return rows;
}

// 2. Bandwidth -------------------------------------------------------------------------

struct HostBuffers {
  void* pinned = nullptr;
  void* pageable = nullptr;
};

double gbps(size_t bytes, double seconds) { return bytes / seconds / 1e9; }

llvm::json::Object bench_bandwidth(Gpu& gpu, size_t bytes, CUdeviceptr device, HostBuffers host,
                                   TransferEngine& engine) {
  const DriverApi& api = gpu.api;
  auto h2d = [&](const void* src, bool pinned) {
    return gbps(bytes, time_median(7, [&] {
                  engine.to_device(device, src, bytes, {.pinned = pinned}).wait();
                }));
  };
  auto d2h = [&](void* dst, bool pinned) {
    return gbps(bytes, time_median(7, [&] {
                  engine.to_host(dst, device, bytes, {.pinned = pinned}).wait();
                }));
  };
  auto driver_h2d = [&](const void* src) {
    return gbps(bytes, time_median(7, [&] { check(api.cuMemcpyHtoD(device, src, bytes), "HtoD"); }));
  };
  auto driver_d2h = [&](void* dst) {
    return gbps(bytes, time_median(7, [&] { check(api.cuMemcpyDtoH(dst, device, bytes), "DtoH"); }));
  };

  double pinned_up = h2d(host.pinned, true), pinned_down = d2h(host.pinned, true);
  double pageable_up = h2d(host.pageable, false), pageable_down = d2h(host.pageable, false);
  double driver_pinned_up = driver_h2d(host.pinned), driver_pinned_down = driver_d2h(host.pinned);
  double driver_pageable_up = driver_h2d(host.pageable);
  double driver_pageable_down = driver_d2h(host.pageable);

  fmt::print("\n(2) {} transfers, GB/s (median of 7); engine defaults: {} MiB chunks, {} copy "
             "threads\n",
             format_bytes(bytes), engine.options().chunk_bytes >> 20, engine.copy_threads());
  fmt::print("{:>34} | {:>8} | {:>8}\n", "", "H2D", "D2H");
  fmt::print("{:>34} | {:>8.2f} | {:>8.2f}\n", "pinned, engine", pinned_up, pinned_down);
  fmt::print("{:>34} | {:>8.2f} | {:>8.2f}\n", "pageable, engine (staged)", pageable_up,
             pageable_down);
  fmt::print("{:>34} | {:>7.0f}% | {:>7.0f}%\n", "pageable / pinned", 100 * pageable_up / pinned_up,
             100 * pageable_down / pinned_down);
  fmt::print("{:>34} | {:>8.2f} | {:>8.2f}\n", "pinned, cuMemcpy", driver_pinned_up,
             driver_pinned_down);
  fmt::print("{:>34} | {:>8.2f} | {:>8.2f}\n", "pageable, cuMemcpy", driver_pageable_up,
             driver_pageable_down);
  return llvm::json::Object{{"bytes", static_cast<int64_t>(bytes)},
                            {"pinned_h2d", pinned_up},
                            {"pinned_d2h", pinned_down},
                            {"pageable_h2d", pageable_up},
                            {"pageable_d2h", pageable_down},
                            {"pageable_h2d_ratio", pageable_up / pinned_up},
                            {"pageable_d2h_ratio", pageable_down / pinned_down},
                            {"driver_pinned_h2d", driver_pinned_up},
                            {"driver_pinned_d2h", driver_pinned_down},
                            {"driver_pageable_h2d", driver_pageable_up},
                            {"driver_pageable_d2h", driver_pageable_down}};
}

/// Pageable bandwidth for other engine settings (to pick the defaults). Two
/// rounds, so a noisy neighbour shows up as disagreement between them.
llvm::json::Array bench_engine_settings(Gpu& gpu, size_t bytes, CUdeviceptr device,
                                        HostBuffers host, MemoryBackend& backend) {
  struct Setting {
    size_t chunk;
    int threads;
    bool nontemporal;
    unsigned buffers;
  };
  const Setting settings[] = {
      {4 * MiB, -1, true, 0},  {4 * MiB, 14, true, 16}, {8 * MiB, 14, true, 0},
      {2 * MiB, 14, true, 32}, {1 * MiB, 14, true, 16}, {1 * MiB, 14, false, 16},
      {2 * MiB, 14, false, 16}, {2 * MiB, 10, false, 12}, {4 * MiB, 14, false, 0},
  };
  fmt::print("\n    pageable {} through the engine with other settings, GB/s H2D / D2H, two "
             "rounds\n",
             format_bytes(bytes));
  llvm::json::Array rows;
  for (int round = 0; round < 2; ++round) {
    for (const Setting& setting : settings) {
      TransferEngine engine(backend, {.chunk_bytes = setting.chunk,
                                      .staging_buffers = setting.buffers,
                                      .copy_threads = setting.threads,
                                      .nontemporal = setting.nontemporal});
      double up = gbps(bytes, time_median(5, [&] {
                         engine.to_device(device, host.pageable, bytes).wait();
                       }));
      double down = gbps(bytes, time_median(5, [&] {
                           engine.to_host(host.pageable, device, bytes).wait();
                         }));
      fmt::print("    round {}: {:>12} stores, chunk {} MiB, {:>2} threads, {:>2} buffers: {:6.2f} / "
                 "{:6.2f}\n",
                 round + 1, setting.nontemporal ? "non-temporal" : "cached", setting.chunk >> 20,
                 engine.copy_threads(), setting.buffers, up, down);
      rows.push_back(llvm::json::Object{{"round", round + 1},
                                        {"chunk", static_cast<int64_t>(setting.chunk)},
                                        {"threads", engine.copy_threads()},
                                        {"nontemporal", setting.nontemporal},
                                        {"buffers", setting.buffers},
                                        {"h2d", up},
                                        {"d2h", down}});
    }
  }
  return rows;
}

// 3. Overlap ----------------------------------------------------------------------------

/// A kernel that only burns time: every thread spins for `cycles` SM clocks.
/// PTX, JIT-compiled by the driver, so the bench needs no NVRTC.
constexpr const char* kSpinPtx = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry gpukit_spin(.param .u64 cycles, .param .u64 out)
{
  .reg .pred %p;
  .reg .b64 %rd<8>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [cycles];
  ld.param.u64 %rd2, [out];
  mov.u64 %rd3, %clock64;
SPIN:
  mov.u64 %rd4, %clock64;
  sub.s64 %rd5, %rd4, %rd3;
  setp.lt.s64 %p, %rd5, %rd1;
  @%p bra SPIN;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p, %r1, 0;
  @%p bra DONE;
  mov.u32 %r2, %ctaid.x;
  cvta.to.global.u64 %rd6, %rd2;
  mul.wide.u32 %rd7, %r2, 4;
  add.s64 %rd6, %rd6, %rd7;
  st.global.u32 [%rd6], %r2;
DONE:
  ret;
}
)";

llvm::json::Object bench_overlap(Gpu& gpu, size_t bytes, CUdeviceptr device, HostBuffers host,
                                 TransferEngine& engine) {
  const DriverApi& api = gpu.api;
  CUstream compute = gpu.stream.get();
  std::vector<char> image(kSpinPtx, kSpinPtx + std::strlen(kSpinPtx) + 1);
  Module module(api, gpu.context.get(), image, "gpukit_spin (PTX)");
  CUfunction spin = module.function("gpukit_spin");
  CUdeviceptr out = 0;
  check(api.cuMemAlloc(&out, 4 * 1024), "cuMemAlloc");
  unsigned grid = static_cast<unsigned>(gpu.sm_count);
  auto launch = [&](long long cycles) {
    void* args[] = {&cycles, &out};
    check(api.cuLaunchKernel(spin, grid, 1, 1, 128, 1, 1, 0, compute, args, nullptr),
          "cuLaunchKernel");
  };
  auto sync = [&] { check(api.cuStreamSynchronize(compute), "cuStreamSynchronize"); };

  // Calibrate: cycles per second of the spin loop on this GPU now.
  long long probe = 20'000'000;
  double probe_s = time_median(3, [&] {
    launch(probe);
    sync();
  });
  double cycles_per_s = probe / probe_s;

  fmt::print("\n(3) a {} copy overlapping a kernel on another stream, ms (median of 5)\n",
             format_bytes(bytes));
  fmt::print("{:>10} | {:>8} | {:>8} | {:>18} | {:>8} | {:>26}\n", "host", "kernel", "copy",
             "kernel + copy", "overlap", "copy then kernel (ordered)");
  llvm::json::Object result;
  for (bool pinned : {true, false}) {
    const void* src = pinned ? host.pinned : host.pageable;
    auto copy = [&] { return engine.to_device(device, src, bytes, {.pinned = pinned}); };
    double copy_s = time_median(5, [&] { copy().wait(); });
    long long cycles = static_cast<long long>(copy_s * cycles_per_s); // as long as the copy
    double kernel_s = time_median(5, [&] {
      launch(cycles);
      sync();
    });
    double both_s = time_median(5, [&] {
      launch(cycles);
      TransferHandle h = copy();
      h.wait();
      sync();
    });
    // The copy ordered before the kernel on the GPU, no host wait between.
    double ordered_s = time_median(5, [&] {
      TransferHandle h = copy();
      h.order_before(compute);
      launch(cycles);
      sync();
    });
    double overlap = (kernel_s + copy_s - both_s) / std::min(kernel_s, copy_s);
    fmt::print("{:>10} | {:>8.2f} | {:>8.2f} | {:>18.2f} | {:>7.0f}% | {:>26.2f}\n",
               pinned ? "pinned" : "pageable", kernel_s * 1e3, copy_s * 1e3, both_s * 1e3,
               overlap * 100, ordered_s * 1e3);
    result[pinned ? "pinned" : "pageable"] = llvm::json::Object{{"kernel_ms", kernel_s * 1e3},
                                                                {"copy_ms", copy_s * 1e3},
                                                                {"both_ms", both_s * 1e3},
                                                                {"overlap", overlap},
                                                                {"ordered_ms", ordered_s * 1e3}};
  }
  fmt::print("    overlap: (kernel + copy - together) / shorter; 100% = fully hidden\n");
  check(api.cuMemFree(out), "cuMemFree");
  return result;
}

bool verify_round_trip(Gpu& gpu, size_t bytes, CUdeviceptr device, HostBuffers host,
                       TransferEngine& engine) {
  auto* src = static_cast<uint32_t*>(host.pageable);
  for (size_t i = 0; i < bytes / 4; ++i)
    src[i] = static_cast<uint32_t>(i * 2654435761u);
  engine.to_device(device, host.pageable, bytes).wait();
  std::memset(host.pinned, 0xFF, bytes);
  engine.to_host(host.pinned, device, bytes).wait();
  return std::memcmp(host.pinned, host.pageable, bytes) == 0;
}

} // namespace

int run(int argc, char** argv) {
  const DriverApi* api = DriverApi::load();
  if (!api) {
    fmt::print("memory_bench: skipped: {}\n", DriverApi::load_error());
    return 0;
  }
  int count = 0;
  if (api->cuInit(0) != CUDA_SUCCESS || api->cuDeviceGetCount(&count) != CUDA_SUCCESS ||
      count == 0) {
    fmt::print("memory_bench: skipped: no CUDA device\n");
    return 0;
  }
  Gpu gpu(*api);
  check(api->cuDeviceGet(&gpu.device, 0), "cuDeviceGet");
  gpu.context = PrimaryContext(*api, gpu.device);
  make_current(*api, gpu.context.get());
  gpu.stream = Stream(*api, gpu.context.get());
  char name[256] = {};
  check(api->cuDeviceGetName(name, sizeof name, gpu.device), "cuDeviceGetName");
  gpu.name = name;
  check(api->cuDeviceGetAttribute(&gpu.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                  gpu.device),
        "cuDeviceGetAttribute");
  fmt::print("memory_bench on {} ({} SMs), {} host threads\n", gpu.name, gpu.sm_count,
             std::thread::hardware_concurrency());

  llvm::json::Object results{{"device", gpu.name}};
  results["allocation"] = bench_allocation(gpu);

  constexpr size_t kBytes = 256 * MiB;
  DriverMemoryBackend backend(*api, gpu.context.get());
  TransferEngine engine(backend);
  CUdeviceptr device = 0;
  check(api->cuMemAlloc(&device, kBytes), "cuMemAlloc");
  HostBuffers host;
  check(api->cuMemAllocHost(&host.pinned, kBytes), "cuMemAllocHost");
  host.pageable = std::aligned_alloc(4096, kBytes);
  std::memset(host.pageable, 1, kBytes); // fault the pages in before timing
  std::memset(host.pinned, 1, kBytes);

  bool intact = verify_round_trip(gpu, kBytes, device, host, engine);
  fmt::print("\n256 MiB pageable round trip through the engine: {}\n",
             intact ? "data intact" : "DATA CORRUPTED");
  results["round_trip_intact"] = intact;
  results["bandwidth"] = bench_bandwidth(gpu, kBytes, device, host, engine);
  results["engine_settings"] = bench_engine_settings(gpu, kBytes, device, host, backend);
  results["overlap"] = bench_overlap(gpu, kBytes, device, host, engine);

  engine.synchronize();
  check(api->cuMemFree(device), "cuMemFree");
  check(api->cuMemFreeHost(host.pinned), "cuMemFreeHost");
  std::free(host.pageable);

  if (argc > 1) {
    std::error_code error;
    llvm::raw_fd_ostream out(argv[1], error);
    if (error) {
      fmt::print(stderr, "memory_bench: cannot write {}: {}\n", argv[1], error.message());
      return 1;
    }
    out << llvm::formatv("{0:2}", llvm::json::Value(std::move(results))) << "\n";
  }
  return intact ? 0 : 1;
}

} // namespace gpukit::rt

int main(int argc, char** argv) {
  try {
    return gpukit::rt::run(argc, argv);
  } catch (const gpukit::Error& e) {
    fmt::print(stderr, "memory_bench: {}\n", e.what());
    return 1;
  }
}
