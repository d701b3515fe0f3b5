// The memory pool, transfer engine and mirrored buffer on a real GPU
// (DriverMemoryBackend). Skipped, with the reason, where there is none.
// Data is random per run and checked byte for byte; destinations are
// poisoned first.
#include "runtime/driver_api.hpp"
#include "runtime/driver_handles.hpp"
#include "runtime/memory_backend_driver.hpp"
#include "runtime/memory_pool.hpp"
#include "runtime/mirrored_buffer.hpp"
#include "runtime/size_classes.hpp"
#include "runtime/transfer_engine.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace gpukit::rt {
namespace {

/// Spins every thread for `cycles` SM clocks, then thread 0 of each block
/// writes its block index to out[block]. PTX, JIT-compiled by the driver.
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

std::vector<uint8_t> random_bytes(size_t n) {
  static std::mt19937_64 rng(std::random_device{}());
  std::vector<uint8_t> v(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t r = rng();
    std::memcpy(&v[i], &r, 8);
  }
  for (; i < n; ++i)
    v[i] = static_cast<uint8_t>(rng());
  return v;
}

class MemoryGpu : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Api = DriverApi::load();
    if (!Api) {
      Reason = DriverApi::load_error();
      return;
    }
    int count = 0;
    if (Api->cuInit(0) != CUDA_SUCCESS || Api->cuDeviceGetCount(&count) != CUDA_SUCCESS ||
        count == 0) {
      Reason = "no CUDA device";
      return;
    }
    CUdevice device = 0;
    check(Api->cuDeviceGet(&device, 0), "cuDeviceGet");
    Context = new PrimaryContext(*Api, device);
  }
  static void TearDownTestSuite() {
    delete Context;
    Context = nullptr;
  }

  void SetUp() override {
    if (!Context)
      GTEST_SKIP() << "no GPU here: " << Reason;
    make_current(*Api, Context->get());
    S1 = Stream(*Api, Context->get());
    S2 = Stream(*Api, Context->get());
  }

  const DriverApi& api() { return *Api; }
  CUcontext context() { return Context->get(); }

  void upload(uint64_t dst, const std::vector<uint8_t>& data) {
    check(api().cuMemcpyHtoD(static_cast<CUdeviceptr>(dst), data.data(), data.size()), "HtoD");
  }
  std::vector<uint8_t> download(uint64_t src, size_t n) {
    std::vector<uint8_t> out(n, 0xEE);
    check(api().cuMemcpyDtoH(out.data(), static_cast<CUdeviceptr>(src), n), "DtoH");
    return out;
  }

  /// Launches the spin kernel for about `ms` milliseconds on `stream`.
  void spin(CUstream stream, double ms, uint64_t out) {
    if (!SpinModule.get()) {
      std::vector<char> image(kSpinPtx, kSpinPtx + std::strlen(kSpinPtx) + 1);
      SpinModule = Module(api(), context(), image, "gpukit_spin (PTX)");
    }
    CUfunction f = SpinModule.function("gpukit_spin");
    // 2 GHz is above any H100/A100 clock: the spin lasts at least `ms`.
    long long cycles = static_cast<long long>(ms * 2e6);
    CUdeviceptr target = static_cast<CUdeviceptr>(out);
    void* args[] = {&cycles, &target};
    check(api().cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
  }

  static inline const DriverApi* Api = nullptr;
  static inline PrimaryContext* Context = nullptr;
  static inline std::string Reason;
  Stream S1, S2;
  Module SpinModule;
};

TEST_F(MemoryGpu, PoolRoundTripsDataOfEverySize) {
  auto pool = make_device_pool(api(), S1.get(), 0, context());
  for (size_t bytes : {size_t(1), size_t(255), size_t(4099), 1 * MiB, 5 * MiB + 7, 300 * MiB + 1}) {
    SCOPED_TRACE(bytes);
    Allocation a = pool->allocate(bytes);
    EXPECT_EQ(a.address % kAllocationAlignment, 0u);
    std::vector<uint8_t> data = random_bytes(bytes);
    upload(a.address, data);
    EXPECT_EQ(download(a.address, bytes), data);
    pool->deallocate(a);
  }
  EXPECT_GT(pool->trim(), 0u);
  EXPECT_EQ(pool->stats().reserved, 0u);
}

TEST_F(MemoryGpu, CrossStreamReuseWaitsForTheKernel) {
  auto pool = make_device_pool(api(), S1.get(), 0, context());
  Allocation a = pool->allocate(32 * MiB, S1.get());
  spin(S1.get(), 200, a.address); // the kernel writes into a
  pool->deallocate(a, S1.get());
  // S1's kernel is still running: S2 must get other memory, without the
  // host waiting for the kernel.
  auto start = std::chrono::steady_clock::now();
  Allocation b = pool->allocate(32 * MiB, S2.get());
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(b.address, a.address);
  EXPECT_LT(waited, 0.1);
  // Once the kernel is done, S2 may have a.
  check(api().cuStreamSynchronize(S1.get()), "cuStreamSynchronize");
  Allocation c = pool->allocate(32 * MiB, S2.get());
  EXPECT_EQ(c.address, a.address);
  pool->deallocate(b, S2.get());
  pool->deallocate(c, S2.get());
  pool->retire_stream(S2.get());
}

TEST_F(MemoryGpu, SameStreamReuseIsImmediate) {
  auto pool = make_device_pool(api(), S1.get(), 0, context());
  Allocation a = pool->allocate(3000, S1.get());
  spin(S1.get(), 50, a.address);
  pool->deallocate(a, S1.get());
  // Stream order protects a: work queued on S1 after the kernel may use it.
  Allocation b = pool->allocate(3000, S1.get());
  EXPECT_EQ(b.address, a.address);
  pool->deallocate(b, S1.get());
}

TEST_F(MemoryGpu, QuotaOutOfMemoryMessage) {
  auto pool = make_device_pool(api(), S1.get(), 64 * MiB, context());
  Allocation a = pool->allocate(48 * MiB);
  try {
    pool->allocate(32 * MiB);
    FAIL() << "allocation beyond the quota succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_EQ(std::string(e.what()).rfind("out of device memory: requested 32.00 MiB; in use "
                                          "48.00 MiB, cached 0 bytes, spilled 0 bytes, quota 64.00 "
                                          "MiB",
                                          0),
              0u)
        << e.what();
  }
  pool->deallocate(a);
}

TEST_F(MemoryGpu, SpillAndRestoreKeepTheData) {
  auto pool = make_device_pool(api(), S1.get(), 64 * MiB, context());
  SpillableHandle x = pool->allocate_spillable(24 * MiB);
  SpillableHandle y = pool->allocate_spillable(24 * MiB);
  std::vector<uint8_t> dx = random_bytes(x.bytes()), dy = random_bytes(y.bytes());
  upload(x.pin().address(), dx);
  upload(y.pin().address(), dy);
  Allocation big = pool->allocate(24 * MiB); // x, least recently used, spills
  EXPECT_TRUE(x.spilled());
  EXPECT_EQ(pool->stats().spilled, 24 * MiB);
  pool->deallocate(big);
  {
    SpillableHandle::Pin px = x.pin();
    EXPECT_FALSE(x.spilled());
    EXPECT_EQ(download(px.address(), dx.size()), dx);
  }
  EXPECT_EQ(download(y.pin().address(), dy.size()), dy);
  EXPECT_EQ(pool->stats().restores, 1u);
}

TEST_F(MemoryGpu, DebugModeCatchesAStaleWriteOnTheDevice) {
  auto pool = std::make_unique<MemoryPool>(std::make_unique<DriverMemoryBackend>(api(), context()),
                                           MemoryPoolOptions{.default_stream = S1.get(), .debug = true});
  Allocation a = pool->allocate(2 * MiB + 5);
  pool->deallocate(a);
  // A kernel holding a stale pointer writes into the freed block.
  check(api().cuMemsetD8Async(static_cast<CUdeviceptr>(a.address + 1000), 0x42, 1, S1.get()),
        "cuMemsetD8Async");
  try {
    pool->allocate(2 * MiB + 5);
    FAIL() << "use after free not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("byte 1000 of"), std::string::npos) << e.what();
  }
}

TEST_F(MemoryGpu, TransfersPageableAndPinnedSmallHugeAlignedOdd) {
  DriverMemoryBackend backend(api(), context());
  TransferEngine engine(backend);
  CUdeviceptr device = 0;
  const size_t capacity = 200 * MiB + 64;
  check(api().cuMemAlloc(&device, capacity), "cuMemAlloc");
  for (size_t bytes : {size_t(1), size_t(7), size_t(4096), 1 * MiB + 3, 8 * MiB, 8 * MiB + 1,
                       200 * MiB + 5}) {
    for (size_t offset : {size_t(0), size_t(3)}) {
      for (bool pinned : {false, true}) {
        SCOPED_TRACE(testing::Message() << bytes << " bytes, offset " << offset
                                        << (pinned ? ", pinned" : ", pageable"));
        std::vector<uint8_t> data = random_bytes(bytes);
        PinnedBlock in_pinned, out_pinned;
        std::vector<uint8_t> in_pageable, out_pageable;
        uint8_t *in, *out;
        if (pinned) {
          in_pinned = engine.allocate_host(bytes + offset);
          out_pinned = engine.allocate_host(bytes + offset);
          ASSERT_TRUE(in_pinned && out_pinned);
          in = static_cast<uint8_t*>(in_pinned.data) + offset;
          out = static_cast<uint8_t*>(out_pinned.data) + offset;
        } else {
          in_pageable.resize(bytes + offset);
          out_pageable.resize(bytes + offset);
          in = in_pageable.data() + offset;
          out = out_pageable.data() + offset;
        }
        std::memcpy(in, data.data(), bytes);
        std::memset(out, 0xEE, bytes);
        check(api().cuMemsetD8(device, 0xCD, bytes), "cuMemsetD8");
        engine.to_device(device, in, bytes).wait();
        engine.to_host(out, device, bytes).wait();
        EXPECT_EQ(std::memcmp(out, data.data(), bytes), 0);
        if (pinned) {
          engine.free_host(in_pinned);
          engine.free_host(out_pinned);
        }
      }
    }
  }
  check(api().cuMemFree(device), "cuMemFree");
}

TEST_F(MemoryGpu, OrderBeforeOrdersALaunchWithoutAHostWait) {
  DriverMemoryBackend backend(api(), context());
  TransferEngine engine(backend);
  const size_t bytes = 128 * MiB + 3;
  CUdeviceptr staged = 0, copy = 0;
  check(api().cuMemAlloc(&staged, bytes), "cuMemAlloc");
  check(api().cuMemAlloc(&copy, bytes), "cuMemAlloc");
  check(api().cuMemsetD8(staged, 0, bytes), "cuMemsetD8");
  for (bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "pinned" : "pageable");
    std::vector<uint8_t> data = random_bytes(bytes);
    PinnedBlock block;
    const void* src = data.data();
    if (pinned) {
      block = engine.allocate_host(bytes);
      std::memcpy(block.data, data.data(), bytes);
      src = block.data;
    }
    TransferHandle h = engine.to_device(staged, src, bytes);
    h.order_before(S1.get());
    // The consumer on S1 (a device copy) must see the whole upload.
    check(api().cuMemcpyDtoDAsync(copy, staged, bytes, S1.get()), "cuMemcpyDtoDAsync");
    check(api().cuStreamSynchronize(S1.get()), "cuStreamSynchronize");
    EXPECT_TRUE(h.ready());
    EXPECT_EQ(download(copy, bytes), data);
    if (pinned)
      engine.free_host(block);
  }
  check(api().cuMemFree(staged), "cuMemFree");
  check(api().cuMemFree(copy), "cuMemFree");
}

TEST_F(MemoryGpu, MirroredBufferSyncsOnce) {
  auto pool = make_device_pool(api(), S1.get(), 0, context());
  DriverMemoryBackend backend(api(), context());
  TransferEngine engine(backend);
  const size_t bytes = 40 * MiB + 1;
  std::vector<uint8_t> data = random_bytes(bytes);
  {
    MirroredBuffer buf(*pool, engine, bytes);
    std::memcpy(buf.host_overwrite(), data.data(), bytes);
    uint64_t device = buf.device_read(S1.get());
    EXPECT_EQ(buf.state(), MirrorState::Synchronised);
    check(api().cuStreamSynchronize(S1.get()), "cuStreamSynchronize");
    EXPECT_EQ(download(device, bytes), data);
    // "A kernel" on S2 writes part of the device copy.
    device = buf.device_write(S2.get());
    check(api().cuMemsetD8Async(static_cast<CUdeviceptr>(device + 100), 0x77, 50, S2.get()),
          "cuMemsetD8Async");
    std::memset(data.data() + 100, 0x77, 50);
    const auto* host = static_cast<const uint8_t*>(buf.host_read());
    EXPECT_EQ(std::memcmp(host, data.data(), bytes), 0);
    buf.host_read();
    EXPECT_EQ(buf.uploads(), 1u);
    EXPECT_EQ(buf.downloads(), 1u);
  }
  pool->retire_stream(S2.get());
  EXPECT_EQ(pool->stats().allocated, 0u);
}

TEST_F(MemoryGpu, ThreadsOnTheirOwnStreams) {
  auto pool = make_device_pool(api(), S1.get(), 256 * MiB, context());
  constexpr int kThreads = 4;
  std::vector<Stream> streams;
  for (int t = 0; t < kThreads; ++t)
    streams.emplace_back(api(), context());
  std::atomic<int> bad{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      make_current(api(), context());
      std::mt19937 rng(t);
      CUstream s = streams[t].get();
      std::vector<Allocation> live;
      for (int i = 0; i < 2000; ++i) {
        if (live.size() < 8 && (live.empty() || rng() % 2)) {
          size_t bytes = size_t(1) << (8 + rng() % 16); // 256 B .. 8 MiB
          Allocation a = pool->allocate(bytes, s);
          check(api().cuMemsetD8Async(static_cast<CUdeviceptr>(a.address), uint8_t(t + 1), 16, s),
                "memset");
          live.push_back(a);
        } else {
          size_t k = rng() % live.size();
          uint8_t head[16];
          check(api().cuMemcpyDtoHAsync(head, static_cast<CUdeviceptr>(live[k].address), 16, s),
                "DtoH");
          check(api().cuStreamSynchronize(s), "sync");
          for (uint8_t b : head)
            bad += b != uint8_t(t + 1);
          pool->deallocate(live[k], s);
          live[k] = live.back();
          live.pop_back();
        }
      }
      for (Allocation a : live)
        pool->deallocate(a, s);
    });
  }
  for (auto& w : workers)
    w.join();
  EXPECT_EQ(bad.load(), 0);
  for (const Stream& s : streams)
    pool->retire_stream(s.get());
  pool->trim();
  MemoryPoolStats stats = pool->stats();
  EXPECT_EQ(stats.reserved, 0u) << stats.summary();
  EXPECT_LE(stats.peak_reserved, 256 * MiB);
}

} // namespace
} // namespace gpukit::rt
