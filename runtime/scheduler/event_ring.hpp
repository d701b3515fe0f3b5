// EventRing: a fixed ring of device events that bounds how much work a
// lane of the DispatchController has in flight, and carries per-launch
// timing events back to whoever reads them. Launching threads claim a slot,
// record into it and publish it; any thread retires the oldest published
// slot once its end event has completed. A full ring makes the claimer wait
// for the oldest slot, which is the in-flight bound.
//
//   uint64_t pos = ring.claim(on_retired);       // may wait for old work
//   backend.record(ring.slot(pos).end, stream);
//   ring.publish(pos);
//   ring.retire(/*wait=*/false, on_retired);     // harvest what finished
//
// Lock-free (a bounded sequence ring in the style of Vyukov's MPMC queue),
// so no lock is ever held across the driver calls it makes.
#pragma once

#include "runtime/scheduler/dispatch_backend.hpp"

#include <llvm/ADT/STLFunctionalExtras.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpukit::rt::sched {

class EventRing {
public:
  struct Slot {
    std::atomic<uint64_t> seq{0};
    CUevent start = nullptr; ///< timed rings only
    CUevent end = nullptr;
    /// Set by the launcher: whether the slot holds a launch that ran (false
    /// when the launch threw) and the GPU time charged for it up front.
    bool valid = false;
    Nanos charged{0};
  };
  using RetireFn = llvm::function_ref<void(Slot&)>;

  /// `slots` is rounded up to a power of two. Timed rings get a start and
  /// an end timing event per slot, others one cheap end event.
  EventRing(DispatchBackend& backend, size_t slots, bool timed);
  ~EventRing();
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  size_t size() const { return Size; }
  bool timed() const { return Timed; }
  /// Claimed and not yet retired.
  uint64_t in_flight() const {
    return Tail.load(std::memory_order_acquire) - Head.load(std::memory_order_acquire);
  }

  /// Claims the next slot; when the ring is full, first waits for the
  /// oldest launch and retires it through `on_retired`.
  uint64_t claim(RetireFn on_retired);
  Slot& slot(uint64_t pos) { return Slots[pos & Mask]; }
  void publish(uint64_t pos) { slot(pos).seq.store(pos + 1, std::memory_order_release); }

  /// Retires published slots in order while their end events have
  /// completed; with `wait`, waits for each instead, emptying the ring up
  /// to the slots still being filled. Returns how many it retired.
  size_t retire(bool wait, RetireFn on_retired);

private:
  /// Retires the oldest slot; false when it is not published or (without
  /// `wait`) not complete.
  bool retire_one(bool wait, RetireFn on_retired);

  DispatchBackend& Backend;
  size_t Size;
  uint64_t Mask;
  bool Timed;
  std::unique_ptr<Slot[]> Slots;
  alignas(64) std::atomic<uint64_t> Head{0}; ///< next to retire
  alignas(64) std::atomic<uint64_t> Tail{0}; ///< next to claim
};

} // namespace gpukit::rt::sched
