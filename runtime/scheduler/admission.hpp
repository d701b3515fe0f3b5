// AdmissionQueue: memory admission control. It holds the device's capacity
// (the memory pool's quota), the bytes reserved by admitted tasks, and the
// tasks waiting for a reservation in order of class (Guaranteed first),
// then priority (higher first), then submission. Admission is strictly in
// that order: a task that would fit waits while one ahead of it does not,
// so a large Guaranteed request is never starved by a stream of small ones.
//
//   AdmissionQueue q(80ull << 30);
//   q.enqueue({.id = id, .qos = QosClass::Guaranteed, .bytes = 6ull << 30});
//   for (const AdmissionRequest& r : q.admit()) ...   // now reserved
//   q.release(6ull << 30);                            // the task finished
//
// Not thread-safe: the Scheduler calls it under its lock.
#pragma once

#include "runtime/scheduler/task.hpp"

#include <llvm/ADT/DenseMap.h>

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace gpukit::rt::sched {

struct AdmissionRequest {
  TaskId id;
  QosClass qos = QosClass::Burstable;
  int priority = 0;
  uint64_t sequence = 0; ///< submission order, the tie-break
  uint64_t bytes = 0;
};

/// Where a waiting request stands.
struct QueuePosition {
  /// Waiting requests ahead of it, by class.
  std::array<size_t, kQosClassCount> ahead{};
  /// The first waiting request, which must be admitted before any other.
  AdmissionRequest head;

  size_t ahead_total() const { return ahead[0] + ahead[1] + ahead[2]; }
};

class AdmissionQueue {
public:
  explicit AdmissionQueue(uint64_t capacity) : Capacity(capacity) {}

  uint64_t capacity() const { return Capacity; }
  uint64_t reserved() const { return Reserved; }
  uint64_t unreserved() const { return Reserved < Capacity ? Capacity - Reserved : 0; }
  /// Reservations already made stand when the capacity shrinks below them.
  void set_capacity(uint64_t capacity) { Capacity = capacity; }

  /// Whether `bytes` could be admitted on an otherwise idle device.
  bool could_ever_fit(uint64_t bytes) const { return bytes <= Capacity; }

  void enqueue(const AdmissionRequest& request);
  /// Removes a waiting request; false when `id` is not waiting.
  bool remove(TaskId id);
  bool is_waiting(TaskId id) const { return Index.count(id.value) != 0; }
  size_t waiting() const { return Queue.size(); }

  /// Admits waiting requests from the head while each fits, reserving their
  /// bytes; returns them in admission order.
  std::vector<AdmissionRequest> admit();
  /// Takes back the reservation of an admitted task that finished.
  void release(uint64_t bytes);

  /// Where `id` waits; nullopt when it does not.
  std::optional<QueuePosition> position(TaskId id) const;
  /// Removes and returns the waiting requests that can never fit (after the
  /// capacity shrank).
  std::vector<AdmissionRequest> take_unsatisfiable();

private:
  struct Order {
    bool operator()(const AdmissionRequest& a, const AdmissionRequest& b) const {
      if (a.qos != b.qos)
        return a.qos < b.qos; // Guaranteed < Burstable < BestEffort
      if (a.priority != b.priority)
        return a.priority > b.priority;
      return a.sequence < b.sequence;
    }
  };
  using Set = std::set<AdmissionRequest, Order>;

  uint64_t Capacity;
  uint64_t Reserved = 0;
  Set Queue;
  llvm::DenseMap<uint64_t, Set::iterator> Index; // lookups only, never iterated
};

} // namespace gpukit::rt::sched
