// Host-side benchmarks of the memory pool's policy over the host backend:
// the cost of a cached allocate+deallocate pair (the target is <= 100 ns
// single-threaded), against malloc/free, and under thread contention; and
// the cost of pinning a resident SpillableHandle (every launch operand).
//
//   memory_pool_bench --benchmark_out=memory_pool.json --benchmark_out_format=json
//
// The GPU comparison (cuMemAlloc, cuMemAllocAsync) is bench/memory_bench.cpp.
#include "runtime/memory_backend_host.hpp"
#include "runtime/memory_pool.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using gpukit::rt::Allocation;
using gpukit::rt::HostMemoryBackend;
using gpukit::rt::MemoryPool;
using gpukit::rt::SpillableHandle;

CUstream stream_id(uintptr_t id) { return reinterpret_cast<CUstream>(id); }

std::unique_ptr<MemoryPool> new_pool() {
  return std::make_unique<MemoryPool>(std::make_unique<HostMemoryBackend>());
}

/// One allocate + deallocate of the same size on the same stream: after the
/// first iteration always a cache hit.
void BM_PoolCachedPair(benchmark::State& state) {
  auto pool = new_pool();
  size_t bytes = static_cast<size_t>(state.range(0));
  pool->deallocate(pool->allocate(bytes, stream_id(1)), stream_id(1));
  for (auto _ : state) {
    Allocation a = pool->allocate(bytes, stream_id(1));
    benchmark::DoNotOptimize(a.address);
    pool->deallocate(a, stream_id(1));
  }
  state.SetLabel(pool->stats().misses == 1 ? "all hits" : "MISSES");
}
BENCHMARK(BM_PoolCachedPair)->Arg(256)->Arg(4096)->Arg(65536)->Arg(1 << 20)->Arg(16 << 20)->Arg(256 << 20);

/// The same pair with several blocks live, as an array program has.
void BM_PoolCachedPairWithLiveBlocks(benchmark::State& state) {
  auto pool = new_pool();
  size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<Allocation> live;
  for (int i = 0; i < 64; ++i)
    live.push_back(pool->allocate(bytes * (1 + i % 3), stream_id(1)));
  pool->deallocate(pool->allocate(bytes, stream_id(1)), stream_id(1));
  for (auto _ : state) {
    Allocation a = pool->allocate(bytes, stream_id(1));
    benchmark::DoNotOptimize(a.address);
    pool->deallocate(a, stream_id(1));
  }
  for (Allocation a : live)
    pool->deallocate(a, stream_id(1));
}
BENCHMARK(BM_PoolCachedPairWithLiveBlocks)->Arg(4096)->Arg(4 << 20);

/// For scale: the C library's allocator on the same sizes.
void BM_MallocFreePair(benchmark::State& state) {
  size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(bytes);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_MallocFreePair)->Arg(256)->Arg(4096)->Arg(65536)->Arg(1 << 20)->Arg(16 << 20);

/// Threads each on their own stream, sharing one pool (and its size class).
MemoryPool* SharedPool = nullptr;

void BM_PoolCachedPairThreads(benchmark::State& state) {
  if (state.thread_index() == 0)
    SharedPool = new_pool().release();
  // Google Benchmark starts the timed loops of all threads together, after
  // thread 0's setup above.
  CUstream stream = stream_id(100 + state.thread_index());
  size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    Allocation a = SharedPool->allocate(bytes, stream);
    benchmark::DoNotOptimize(a.address);
    SharedPool->deallocate(a, stream);
  }
  if (state.thread_index() == 0) {
    delete SharedPool;
    SharedPool = nullptr;
  }
}
BENCHMARK(BM_PoolCachedPairThreads)->Arg(4096)->Arg(4 << 20)->ThreadRange(1, 8)->UseRealTime();

/// Pin + unpin of a resident handle on a stream that already used it: what
/// each operand of a warm launch costs (OperandPins).
void BM_PinUnpinResident(benchmark::State& state) {
  auto pool = new_pool();
  SpillableHandle handle = pool->allocate_spillable(4096, stream_id(1));
  for (auto _ : state) {
    SpillableHandle::Pin pin = handle.pin(stream_id(1));
    benchmark::DoNotOptimize(pin.address());
  }
}
BENCHMARK(BM_PinUnpinResident);

/// The same with one handle pinned by several threads at once (one operand
/// shared by launches from several threads), each on its own stream.
SpillableHandle* SharedHandle = nullptr;

void BM_PinUnpinSharedThreads(benchmark::State& state) {
  if (state.thread_index() == 0) {
    SharedPool = new_pool().release();
    SharedHandle = new SpillableHandle(SharedPool->allocate_spillable(4096, stream_id(1)));
  }
  CUstream stream = stream_id(100 + state.thread_index());
  for (auto _ : state) {
    SpillableHandle::Pin pin = SharedHandle->pin(stream);
    benchmark::DoNotOptimize(pin.address());
  }
  if (state.thread_index() == 0) {
    delete SharedHandle;
    SharedHandle = nullptr;
    delete SharedPool;
    SharedPool = nullptr;
  }
}
BENCHMARK(BM_PinUnpinSharedThreads)->ThreadRange(1, 2)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
