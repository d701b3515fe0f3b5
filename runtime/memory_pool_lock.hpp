// SpinLock (internal to the memory pool): the lock of a size class's free
// lists, held for a vector push or pop. Uncontended it costs what a
// std::mutex does (one atomic exchange); contended it spins briefly instead
// of sleeping in the kernel, which for a critical section of tens of
// nanoseconds is far cheaper than a futex round trip.
//
//   std::lock_guard<SpinLock> lock(bin_lock);
//
// After a few dozen spins it yields, so a holder that was preempted (or is
// inside a driver call on the rare cross-stream path) costs little.
#pragma once

#include <atomic>
#include <thread>

namespace gpukit::rt::detail {

class SpinLock {
public:
  void lock() {
    unsigned spins = 0;
    while (Locked.exchange(true, std::memory_order_acquire)) {
      do {
        if (++spins < 64)
          relax();
        else
          std::this_thread::yield();
      } while (Locked.load(std::memory_order_relaxed));
    }
  }
  bool try_lock() {
    return !Locked.load(std::memory_order_relaxed) &&
           !Locked.exchange(true, std::memory_order_acquire);
  }
  void unlock() { Locked.store(false, std::memory_order_release); }

private:
  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic<bool> Locked{false};
};

} // namespace gpukit::rt::detail
