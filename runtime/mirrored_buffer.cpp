#include "runtime/mirrored_buffer.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace gpukit::rt {

std::string_view to_string(MirrorState state) {
  switch (state) {
  case MirrorState::Uninitialised: return "uninitialised";
  case MirrorState::HostOnly: return "host-only";
  case MirrorState::DeviceOnly: return "device-only";
  case MirrorState::Synchronised: return "synchronised";
  case MirrorState::HostDirty: return "host-dirty";
  case MirrorState::DeviceDirty: return "device-dirty";
  }
  return "unknown";
}

MirroredBuffer::MirroredBuffer(DeviceAllocator& allocator, TransferEngine& engine, size_t bytes)
    : Allocator(allocator), Engine(engine), Bytes(bytes) {}

MirroredBuffer::~MirroredBuffer() {
  // Nothing may still read the host copy or use the device copy.
  try {
    PendingUpload.wait();
  } catch (...) {
  }
  if (Device)
    Allocator.deallocate(Device, device_users());
  if (Pinned)
    Engine.free_host(Pinned);
  std::free(Pageable);
}

void* MirroredBuffer::host_pointer_or_null() const { return Pinned ? Pinned.data : Pageable; }

void MirroredBuffer::ensure_host() {
  if (host_pointer_or_null() || Bytes == 0)
    return;
  Pinned = Engine.allocate_host(Bytes);
  if (Pinned)
    return;
  // Out of pinned memory: pageable memory works, through staging.
  Pageable = std::aligned_alloc(4096, (Bytes + 4095) / 4096 * 4096);
  if (!Pageable)
    throw Error(ErrorKind::OutOfMemory,
                fmt::format("MirroredBuffer: cannot allocate {} bytes of host memory", Bytes));
}

void MirroredBuffer::ensure_device(CUstream stream) {
  if (!Device && Bytes)
    Device = Allocator.allocate(Bytes, stream);
}

void MirroredBuffer::note_device_use(CUstream stream) {
  if (std::find(DeviceUsers.begin(), DeviceUsers.end(), stream) == DeviceUsers.end())
    DeviceUsers.push_back(stream);
}

CUstream MirroredBuffer::device_users() {
  if (DeviceUsers.empty())
    return nullptr;
  MemoryBackend& backend = Engine.backend();
  CUstream first = DeviceUsers.front();
  for (size_t i = 1; i < DeviceUsers.size(); ++i) {
    BackendEvent event = backend.record(DeviceUsers[i]);
    backend.wait(first, event);
    backend.destroy(event);
  }
  DeviceUsers.assign(1, first);
  return first;
}

void MirroredBuffer::upload(CUstream stream) {
  ensure_device(stream);
  // After work that still reads the old device contents (write after read).
  TransferOptions options;
  options.after = device_users();
  options.pinned = static_cast<bool>(Pinned);
  PendingUpload = Engine.to_device(Device.address, host_pointer_or_null(), Bytes, options);
  PendingUpload.order_before(stream);
  ++Uploads;
}

void MirroredBuffer::download() {
  ensure_host();
  // A pending upload reads the host copy we are about to overwrite.
  PendingUpload.wait();
  TransferOptions options;
  options.after = device_users();
  options.pinned = static_cast<bool>(Pinned);
  Engine.to_host(host_pointer_or_null(), Device.address, Bytes, options).wait();
  ++Downloads;
}

void MirroredBuffer::throw_uninitialised(Side side) const {
  throw Error(ErrorKind::Usage,
              fmt::format("MirroredBuffer: reading {} bytes on the {} that were never written; "
                          "write the buffer first (host_write/host_overwrite or a kernel)",
                          Bytes, side == Side::Host ? "host" : "device"));
}

const void* MirroredBuffer::host_read() {
  switch (State) {
  case MirrorState::Uninitialised: throw_uninitialised(Side::Host);
  case MirrorState::HostOnly:
  case MirrorState::Synchronised:
  case MirrorState::HostDirty: break;
  case MirrorState::DeviceOnly:
  case MirrorState::DeviceDirty:
    download();
    State = MirrorState::Synchronised;
    break;
  }
  return host_pointer_or_null();
}

void* MirroredBuffer::host_write() {
  switch (State) {
  case MirrorState::Uninitialised:
  case MirrorState::HostOnly:
    ensure_host();
    PendingUpload.wait();
    State = MirrorState::HostOnly;
    break;
  case MirrorState::Synchronised:
  case MirrorState::HostDirty:
    PendingUpload.wait();
    State = MirrorState::HostDirty;
    break;
  case MirrorState::DeviceOnly:
  case MirrorState::DeviceDirty:
    download();
    State = MirrorState::HostDirty;
    break;
  }
  return host_pointer_or_null();
}

void* MirroredBuffer::host_overwrite() {
  ensure_host();
  PendingUpload.wait();
  State = Device ? MirrorState::HostDirty : MirrorState::HostOnly;
  return host_pointer_or_null();
}

uint64_t MirroredBuffer::device_read(CUstream stream) {
  switch (State) {
  case MirrorState::Uninitialised: throw_uninitialised(Side::Device);
  case MirrorState::DeviceOnly:
  case MirrorState::Synchronised:
  case MirrorState::DeviceDirty:
    // An upload still in flight is ordered before this stream's work too.
    PendingUpload.order_before(stream);
    break;
  case MirrorState::HostOnly:
  case MirrorState::HostDirty:
    upload(stream);
    State = MirrorState::Synchronised;
    break;
  }
  note_device_use(stream);
  return Device.address;
}

uint64_t MirroredBuffer::device_write(CUstream stream) {
  switch (State) {
  case MirrorState::Uninitialised:
  case MirrorState::DeviceOnly:
    ensure_device(stream);
    State = MirrorState::DeviceOnly;
    break;
  case MirrorState::Synchronised:
  case MirrorState::DeviceDirty:
    PendingUpload.order_before(stream);
    State = MirrorState::DeviceDirty;
    break;
  case MirrorState::HostOnly:
  case MirrorState::HostDirty:
    upload(stream);
    State = MirrorState::DeviceDirty;
    break;
  }
  note_device_use(stream);
  return Device.address;
}

uint64_t MirroredBuffer::device_overwrite(CUstream stream) {
  ensure_device(stream);
  PendingUpload.order_before(stream);
  State = host_pointer_or_null() ? MirrorState::DeviceDirty : MirrorState::DeviceOnly;
  note_device_use(stream);
  return Device.address;
}

} // namespace gpukit::rt
