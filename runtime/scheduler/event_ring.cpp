#include "runtime/scheduler/event_ring.hpp"

#include <bit>
#include <thread>

namespace gpukit::rt::sched {

EventRing::EventRing(DispatchBackend& backend, size_t slots, bool timed)
    : Backend(backend), Size(std::bit_ceil(slots < 1 ? size_t(1) : slots)), Mask(Size - 1), Timed(timed),
      Slots(new Slot[Size]) {
  for (size_t i = 0; i < Size; ++i) {
    Slots[i].seq.store(i, std::memory_order_relaxed);
    if (Timed)
      Slots[i].start = Backend.create_event(true);
    Slots[i].end = Backend.create_event(Timed);
  }
}

EventRing::~EventRing() {
  for (size_t i = 0; i < Size; ++i) {
    if (Slots[i].start)
      Backend.destroy_event(Slots[i].start);
    if (Slots[i].end)
      Backend.destroy_event(Slots[i].end);
  }
}

uint64_t EventRing::claim(RetireFn on_retired) {
  uint64_t pos = Tail.fetch_add(1, std::memory_order_acq_rel);
  Slot& s = slot(pos);
  // The slot is free once its occupant from the previous lap is retired.
  while (s.seq.load(std::memory_order_acquire) != pos)
    if (!retire_one(true, on_retired))
      std::this_thread::yield(); // the oldest is still being filled by its launcher
  return pos;
}

bool EventRing::retire_one(bool wait, RetireFn on_retired) {
  uint64_t head = Head.load(std::memory_order_acquire);
  Slot& s = slot(head);
  if (s.seq.load(std::memory_order_acquire) != head + 1)
    return false; // empty, or its launcher has not published it yet
  if (wait)
    Backend.wait(s.end);
  else if (!Backend.query(s.end))
    return false;
  // Another thread may have retired it meanwhile; then this one made progress anyway.
  if (!Head.compare_exchange_strong(head, head + 1, std::memory_order_acq_rel))
    return true;
  // Free the slot even when on_retired throws, or the ring would wedge.
  struct Release {
    Slot& s;
    uint64_t next;
    ~Release() { s.seq.store(next, std::memory_order_release); }
  } release{s, head + Size};
  on_retired(s);
  return true;
}

size_t EventRing::retire(bool wait, RetireFn on_retired) {
  size_t retired = 0;
  while (retire_one(wait, on_retired))
    ++retired;
  return retired;
}

} // namespace gpukit::rt::sched
