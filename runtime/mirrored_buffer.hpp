// MirroredBuffer: one buffer with a host copy and a device copy, kept
// coherent lazily. Each access says which side and whether it reads or
// writes; a read on one side after a write on the other copies the data
// across first, exactly once, and a write marks the other side stale.
//
//   MirroredBuffer buf(pool, engine, n * sizeof(float));
//   std::fill_n(static_cast<float*>(buf.host_overwrite()), n, 1.0f);  // HostOnly
//   launch(kernel, buf.device_write(stream), stream);                 // uploads once; DeviceDirty
//   const float* r = static_cast<const float*>(buf.host_read());      // downloads once; Synchronised
//
// States and transitions (tests/runtime/mirrored_buffer_test.cpp checks
// every cell; "up"/"down" is a copy):
//
//   state \ access  host_read       host_write       device_read      device_write
//   Uninitialised   Error{Usage}    HostOnly         Error{Usage}     DeviceOnly
//   HostOnly        HostOnly        HostOnly         up Synchronised  up DeviceDirty
//   DeviceOnly      down Synchron.  down HostDirty   DeviceOnly       DeviceOnly
//   Synchronised    Synchronised    HostDirty        Synchronised     DeviceDirty
//   HostDirty       HostDirty       HostDirty        up Synchronised  up DeviceDirty
//   DeviceDirty     down Synchron.  down HostDirty   DeviceDirty      DeviceDirty
//
// The *_overwrite accesses promise to write every byte: they never copy and
// leave the other side stale (HostOnly/HostDirty, DeviceOnly/DeviceDirty).
// Device accesses are ordered on `stream` after any upload without a host
// wait; a download waits for the streams that used the device copy. The
// host memory is pinned when the engine has pinned memory left. Not
// thread-safe (like a std::vector); pointers stay valid for the buffer's life.
#pragma once

#include "runtime/allocator.hpp"
#include "runtime/pinned_host_pool.hpp"
#include "runtime/transfer_engine.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpukit::rt {

enum class MirrorState : uint8_t {
  Uninitialised, ///< no valid data anywhere
  HostOnly,      ///< valid on the host; no device copy exists
  DeviceOnly,    ///< valid on the device; no host copy exists
  Synchronised,  ///< both copies valid and equal
  HostDirty,     ///< both exist; the host copy is newer
  DeviceDirty,   ///< both exist; the device copy is newer
};

std::string_view to_string(MirrorState state);

class MirroredBuffer {
public:
  MirroredBuffer(DeviceAllocator& allocator, TransferEngine& engine, size_t bytes);
  ~MirroredBuffer();
  MirroredBuffer(const MirroredBuffer&) = delete;
  MirroredBuffer& operator=(const MirroredBuffer&) = delete;

  /// The host copy, current.
  const void* host_read();
  /// The host copy, current, for a partial update.
  void* host_write();
  /// The host copy for a caller that writes every byte (no copy).
  void* host_overwrite();
  /// The device copy, current for work ordered on `stream`.
  uint64_t device_read(CUstream stream = nullptr);
  uint64_t device_write(CUstream stream = nullptr);
  uint64_t device_overwrite(CUstream stream = nullptr);

  MirrorState state() const { return State; }
  size_t bytes() const { return Bytes; }
  /// Copies made so far in each direction.
  uint64_t uploads() const { return Uploads; }
  uint64_t downloads() const { return Downloads; }

private:
  enum class Side { Host, Device };
  void* host_pointer_or_null() const;
  void ensure_host();
  void ensure_device(CUstream stream);
  void upload(CUstream stream);
  void download();
  void note_device_use(CUstream stream);
  /// One stream ordered after every stream that used the device copy.
  CUstream device_users();
  [[noreturn]] void throw_uninitialised(Side side) const;

  DeviceAllocator& Allocator;
  TransferEngine& Engine;
  size_t Bytes;
  MirrorState State = MirrorState::Uninitialised;
  PinnedBlock Pinned;        ///< host copy when pinned memory was available
  void* Pageable = nullptr;  ///< host copy otherwise
  Allocation Device;
  std::vector<CUstream> DeviceUsers; ///< streams that used Device since the last transfer
  TransferHandle PendingUpload;      ///< still reading the host copy
  uint64_t Uploads = 0;
  uint64_t Downloads = 0;
};

} // namespace gpukit::rt
