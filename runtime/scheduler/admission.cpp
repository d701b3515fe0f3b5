#include "runtime/scheduler/admission.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cassert>

namespace gpukit::rt::sched {

void AdmissionQueue::enqueue(const AdmissionRequest& request) {
  assert(request.id && "admission needs a task id");
  if (Index.count(request.id.value))
    throw Error(ErrorKind::Internal, fmt::format("task #{} is already waiting for admission", request.id.value));
  auto [it, inserted] = Queue.insert(request);
  assert(inserted && "sequence numbers are unique");
  (void)inserted;
  Index[request.id.value] = it;
}

bool AdmissionQueue::remove(TaskId id) {
  auto found = Index.find(id.value);
  if (found == Index.end())
    return false;
  Queue.erase(found->second);
  Index.erase(found);
  return true;
}

std::vector<AdmissionRequest> AdmissionQueue::admit() {
  std::vector<AdmissionRequest> admitted;
  while (!Queue.empty()) {
    const AdmissionRequest& head = *Queue.begin();
    if (head.bytes > unreserved())
      break; // strict order: nothing behind the head goes first
    Reserved += head.bytes;
    admitted.push_back(head);
    Index.erase(head.id.value);
    Queue.erase(Queue.begin());
  }
  return admitted;
}

void AdmissionQueue::release(uint64_t bytes) {
  if (bytes > Reserved)
    throw Error(ErrorKind::Internal,
                fmt::format("releasing {} reserved bytes but only {} are reserved", bytes, Reserved));
  Reserved -= bytes;
}

std::optional<QueuePosition> AdmissionQueue::position(TaskId id) const {
  auto found = Index.find(id.value);
  if (found == Index.end())
    return std::nullopt;
  QueuePosition pos;
  pos.head = *Queue.begin();
  for (auto it = Queue.begin(); it != found->second; ++it)
    ++pos.ahead[static_cast<size_t>(it->qos)];
  return pos;
}

std::vector<AdmissionRequest> AdmissionQueue::take_unsatisfiable() {
  std::vector<AdmissionRequest> taken;
  for (auto it = Queue.begin(); it != Queue.end();) {
    if (could_ever_fit(it->bytes)) {
      ++it;
      continue;
    }
    taken.push_back(*it);
    Index.erase(it->id.value);
    it = Queue.erase(it);
  }
  return taken;
}

} // namespace gpukit::rt::sched
