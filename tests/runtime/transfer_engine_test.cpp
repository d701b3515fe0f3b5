// The transfer engine's staging and pipelining over the host backend: every
// size, alignment and kind of host memory arrives intact; handles behave as
// futures. (The same engine on a GPU: memory_gpu_test.cpp.)
#include "runtime/transfer_engine.hpp"

#include "runtime/memory_backend_host.hpp"
#include "runtime/size_classes.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace gpukit::rt {
namespace {

std::vector<uint8_t> random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v)
    b = static_cast<uint8_t>(rng());
  return v;
}

struct Case {
  size_t bytes;
  size_t offset; ///< host pointer misalignment
};

/// Round trip host -> "device" -> host through `engine`, pageable or pinned.
void round_trip(TransferEngine& engine, HostMemoryBackend& backend, Case c, bool pinned,
                unsigned seed) {
  SCOPED_TRACE(testing::Message() << c.bytes << " bytes at offset " << c.offset
                                  << (pinned ? " pinned" : " pageable"));
  std::vector<uint8_t> data = random_bytes(c.bytes, seed);
  uint64_t device = backend.reserve(std::max<size_t>(c.bytes, 1));
  ASSERT_NE(device, 0u);
  std::memset(reinterpret_cast<void*>(device), 0xEE, c.bytes); // poisoned

  PinnedBlock in, out;
  std::vector<uint8_t> in_pageable, out_pageable;
  uint8_t* src;
  uint8_t* dst;
  if (pinned) {
    in = engine.allocate_host(c.bytes + c.offset + 1);
    out = engine.allocate_host(c.bytes + c.offset + 1);
    src = static_cast<uint8_t*>(in.data) + c.offset;
    dst = static_cast<uint8_t*>(out.data) + c.offset;
  } else {
    in_pageable.resize(c.bytes + c.offset + 1);
    out_pageable.resize(c.bytes + c.offset + 1);
    src = in_pageable.data() + c.offset;
    dst = out_pageable.data() + c.offset;
  }
  std::memcpy(src, data.data(), c.bytes);
  std::memset(dst, 0xCD, c.bytes);

  TransferHandle up = engine.to_device(device, src, c.bytes);
  up.wait();
  EXPECT_TRUE(up.ready());
  EXPECT_EQ(up.bytes(), c.bytes);
  EXPECT_EQ(std::memcmp(reinterpret_cast<void*>(device), data.data(), c.bytes), 0);
  TransferHandle down = engine.to_host(dst, device, c.bytes);
  down.wait();
  EXPECT_EQ(std::memcmp(dst, data.data(), c.bytes), 0);
  if (pinned) {
    engine.free_host(in);
    engine.free_host(out);
  }
  backend.release(device, std::max<size_t>(c.bytes, 1));
}

TEST(TransferEngine, SmallHugeAlignedAndOddSizesArriveIntact) {
  HostMemoryBackend backend;
  // Small chunks and a short ring, so multi-chunk pipelines are exercised.
  TransferEngine engine(backend, {.chunk_bytes = 64 * KiB, .staging_buffers = 3, .copy_threads = 2});
  unsigned seed = 1;
  for (Case c : {Case{0, 0}, Case{1, 0}, Case{7, 3}, Case{4096, 0}, Case{65536, 0}, Case{65537, 1},
                 Case{3 * 65536 + 5, 7}, Case{1 * MiB + 3, 0}, Case{5 * MiB + 4093, 5}})
    for (bool pinned : {false, true})
      round_trip(engine, backend, c, pinned, seed++);
}

TEST(TransferEngine, DefaultOptionsMoveALargeBuffer) {
  HostMemoryBackend backend;
  TransferEngine engine(backend);
  round_trip(engine, backend, Case{40 * MiB + 17, 1}, false, 99);
}

TEST(TransferEngine, ManyTransfersInFlightCompleteInOrder) {
  HostMemoryBackend backend;
  TransferEngine engine(backend, {.chunk_bytes = 4096, .staging_buffers = 2});
  constexpr size_t n = 100 * 1000;
  uint64_t device = backend.reserve(n);
  std::vector<std::vector<uint8_t>> versions;
  std::vector<TransferHandle> handles;
  for (unsigned v = 0; v < 8; ++v) {
    versions.push_back(random_bytes(n, 100 + v));
    handles.push_back(engine.to_device(device, versions.back().data(), n));
  }
  engine.synchronize();
  for (const TransferHandle& h : handles)
    EXPECT_TRUE(h.ready());
  // Later uploads to the same place win: uploads run in submission order.
  EXPECT_EQ(std::memcmp(reinterpret_cast<void*>(device), versions.back().data(), n), 0);
  backend.release(device, n);
}

TEST(TransferEngine, HandlesAreFuturesOverEvents) {
  auto events = std::make_shared<ManualEvents>();
  HostMemoryBackend backend(HostMemoryBackend::Options{.events = events});
  TransferEngine engine(backend);
  PinnedBlock host = engine.allocate_host(1000);
  uint64_t device = backend.reserve(1000);
  TransferHandle up = engine.to_device(device, host.data, 1000);
  // Queued, but the copy stream has not reached its event yet.
  up.order_before(reinterpret_cast<CUstream>(42)); // does not block the host
  EXPECT_FALSE(up.ready());
  events->complete(engine.upload_stream());
  EXPECT_TRUE(up.ready());
  up.wait();

  TransferHandle empty = engine.to_device(device, host.data, 0);
  EXPECT_TRUE(empty.ready());
  EXPECT_TRUE(TransferHandle().ready());
  engine.free_host(host);
  backend.release(device, 1000);
}

TEST(TransferEngine, AfterOrdersBehindAnotherStream) {
  auto events = std::make_shared<ManualEvents>();
  HostMemoryBackend backend(HostMemoryBackend::Options{.events = events});
  TransferEngine engine(backend);
  uint64_t device = backend.reserve(256);
  std::vector<uint8_t> out(256);
  const CUstream compute = reinterpret_cast<CUstream>(7);
  uint64_t recorded = events->recorded();
  TransferHandle down = engine.to_host(out.data(), device, 256, {.after = compute});
  // An event was recorded on the compute stream at submission.
  EXPECT_GT(events->recorded(), recorded);
  events->complete_all();
  down.wait();
  backend.release(device, 256);
}

TEST(TransferEngine, ChunksMustBeWholePages) {
  HostMemoryBackend backend;
  try {
    TransferEngine engine(backend, {.chunk_bytes = 1000});
    FAIL() << "accepted a chunk of 1000 bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(std::string(e.what()),
              "TransferEngine: chunk_bytes is 1000; it must be a positive multiple of 4096");
  }
}

TEST(TransferEngine, WorksWithoutHelperThreads) {
  HostMemoryBackend backend;
  TransferEngine engine(backend, {.chunk_bytes = 1 * MiB, .staging_buffers = 2, .copy_threads = 0});
  round_trip(engine, backend, Case{3 * MiB + 1, 0}, false, 5);
}

} // namespace
} // namespace gpukit::rt
