// CopyWorkers (internal to the transfer engine): host threads that work on
// the chunks of a pageable transfer side by side. Staging pageable memory
// costs one host memcpy per byte, and one core copies ~10 GB/s, a fifth of a
// PCIe 5 DMA; a dozen cores, each on its own chunk, keep up with the bus.
//
//   CopyWorkers workers(12);
//   workers.run(13, [&](unsigned lane) { while (auto chunk = next()) stage(*chunk); });
//
// run() calls the function on up to `lanes` threads (the caller is lane 0)
// and returns when all have returned, rethrowing the first exception.
// Thread-safe: several callers share the threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpukit::rt::detail {

/// memcpy with non-temporal (cache-bypassing) stores on x86-64 for large
/// copies: no read-for-ownership of the destination, so a third less memory
/// traffic; memcpy elsewhere and for small copies.
void stream_copy(void* dst, const void* src, size_t bytes);

class CopyWorkers {
public:
  /// `threads` helpers besides the callers (0: run() uses the caller alone).
  explicit CopyWorkers(unsigned threads);
  ~CopyWorkers();
  CopyWorkers(const CopyWorkers&) = delete;
  CopyWorkers& operator=(const CopyWorkers&) = delete;

  void run(unsigned lanes, const std::function<void(unsigned lane)>& lane);
  unsigned threads() const { return static_cast<unsigned>(Threads.size()); }

private:
  struct Batch {
    const std::function<void(unsigned)>* Lane = nullptr;
    std::mutex M;
    std::condition_variable Done;
    unsigned Remaining = 0; ///< guarded by M
    std::exception_ptr Failure;
  };
  struct Task {
    Batch* Owner = nullptr;
    unsigned Lane = 0;
  };

  static void execute(const Task& task);
  void loop();

  std::vector<std::thread> Threads;
  std::mutex M;
  std::condition_variable Work;
  std::deque<Task> Queue;
  bool Stop = false;
};

} // namespace gpukit::rt::detail
