#include "runtime/transfer_copy_workers.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace gpukit::rt::detail {

void stream_copy(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  constexpr size_t kSmall = 64 * 1024;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (bytes < kSmall) {
    std::memcpy(d, s, bytes);
    return;
  }
  // SSE2 is part of x86-64: no dispatch needed. Stores must be 16-aligned.
  size_t head = (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  size_t body = bytes & ~size_t(63);
  for (size_t i = 0; i < body; i += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  // Non-temporal stores are weakly ordered: fence before a DMA or another
  // thread reads the data.
  _mm_sfence();
  std::memcpy(d + body, s + body, bytes - body);
#else
  std::memcpy(dst, src, bytes);
#endif
}

CopyWorkers::CopyWorkers(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i)
    Threads.emplace_back([this] { loop(); });
}

CopyWorkers::~CopyWorkers() {
  {
    std::lock_guard<std::mutex> lock(M);
    Stop = true;
  }
  Work.notify_all();
  for (std::thread& t : Threads)
    t.join();
}

void CopyWorkers::execute(const Task& task) {
  Batch& batch = *task.Owner;
  std::exception_ptr failure;
  try {
    (*batch.Lane)(task.Lane);
  } catch (...) {
    failure = std::current_exception();
  }
  // Count down under the batch's lock: its owner destroys the batch as soon
  // as it sees zero, which it can only do once this lock is released.
  std::lock_guard<std::mutex> lock(batch.M);
  if (failure && !batch.Failure)
    batch.Failure = failure;
  if (--batch.Remaining == 0)
    batch.Done.notify_all();
}

void CopyWorkers::loop() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(M);
      Work.wait(lock, [&] { return Stop || !Queue.empty(); });
      if (Queue.empty())
        return;
      task = Queue.front();
      Queue.pop_front();
    }
    execute(task);
  }
}

void CopyWorkers::run(unsigned lanes, const std::function<void(unsigned)>& lane) {
  lanes = std::max(1u, std::min(lanes, threads() + 1));
  Batch batch;
  batch.Lane = &lane;
  batch.Remaining = lanes;
  if (lanes > 1) {
    {
      std::lock_guard<std::mutex> lock(M);
      for (unsigned i = 1; i < lanes; ++i)
        Queue.push_back(Task{&batch, i});
    }
    Work.notify_all();
  }
  execute(Task{&batch, 0});
  // Lanes still queued (the helpers are busy elsewhere) run here: a lane
  // finds no work left and returns at once, so this never waits long.
  for (;;) {
    Task task;
    {
      std::lock_guard<std::mutex> lock(M);
      auto it = std::find_if(Queue.begin(), Queue.end(),
                             [&](const Task& t) { return t.Owner == &batch; });
      if (it == Queue.end())
        break;
      task = *it;
      Queue.erase(it);
    }
    execute(task);
  }
  std::unique_lock<std::mutex> lock(batch.M);
  batch.Done.wait(lock, [&] { return batch.Remaining == 0; });
  if (batch.Failure)
    std::rethrow_exception(batch.Failure);
}

} // namespace gpukit::rt::detail
