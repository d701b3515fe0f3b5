// TransferEngine: host<->device copies on dedicated copy streams, so they
// overlap with kernels on the compute stream. Pinned host memory moves in
// one DMA. Pageable memory moves in chunks staged through pinned buffers,
// a dozen host threads each copying its own chunk while earlier chunks are
// on the bus (one core's memcpy is a fifth of a PCIe 5 DMA). Each transfer
// returns a TransferHandle, a future that can also order a launch after
// the transfer without blocking the host.
//
//   TransferEngine engine(backend);
//   TransferHandle up = engine.to_device(dst, host_vector.data(), bytes);
//   up.order_before(compute_stream);       // the kernel waits on the GPU, not the host
//   launch(kernel, compute_stream);
//   TransferHandle down = engine.to_host(result.data(), out, bytes, {.after = compute_stream});
//   down.wait();
//
// The host buffer must stay valid and unchanged (to_device) or untouched
// (to_host) until the handle is ready. The engine, its backend and its
// handles must not outlive the backend. Transfers in one direction run in
// the order they were submitted.
#pragma once

#include "runtime/memory_backend.hpp"
#include "runtime/pinned_host_pool.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpukit::rt {

namespace detail {
struct TransferState;
class TransferDirection;
class CopyWorkers;
} // namespace detail

struct TransferOptions {
  /// The host buffer is page-locked (cuMemAllocHost, cuMemHostRegister): it
  /// moves in one DMA, without staging. Blocks of the engine's own pinned
  /// pool (allocate_host) are recognised without this.
  bool pinned = false;
  /// Work already ordered on this stream comes first: the kernel producing
  /// the data (to_host), or one still reading the destination (to_device).
  CUstream after = nullptr;
};

/// A transfer in flight. Copyable; all copies refer to one transfer.
class TransferHandle {
public:
  TransferHandle() = default;

  /// True once the data has arrived. Never blocks.
  bool ready() const;
  /// Blocks until the data has arrived; throws the transfer's failure.
  void wait() const;
  /// Orders work later submitted to `stream` after the transfer's device
  /// side, with no host synchronisation. (A pageable upload first waits,
  /// on the host, until its last chunk has been staged and queued.)
  void order_before(CUstream stream) const;
  size_t bytes() const;
  explicit operator bool() const { return State != nullptr; }

private:
  friend class TransferEngine;
  friend class detail::TransferDirection;
  explicit TransferHandle(std::shared_ptr<detail::TransferState> state) : State(std::move(state)) {}

  std::shared_ptr<detail::TransferState> State;
};

class TransferEngine {
public:
  struct Options {
    /// Pageable transfers move in chunks of this size (a multiple of 4 KiB).
    size_t chunk_bytes = 4 << 20;
    /// Pinned staging buffers per direction; 0: one per copy lane, plus 4.
    unsigned staging_buffers = 0;
    /// Host threads copying chunks between pageable and staging memory
    /// besides the direction's own thread; -1: the hardware threads less
    /// two, at most 14.
    int copy_threads = -1;
    /// Staging copies use non-temporal stores (x86-64): the copy does not
    /// read the destination into the cache first, a third less memory
    /// traffic, which is what bounds a staged transfer.
    bool nontemporal = true;
  };

  explicit TransferEngine(MemoryBackend& backend) : TransferEngine(backend, Options{}) {}
  TransferEngine(MemoryBackend& backend, Options options);
  /// Finishes every submitted transfer, then releases streams and buffers.
  ~TransferEngine();
  TransferEngine(const TransferEngine&) = delete;
  TransferEngine& operator=(const TransferEngine&) = delete;

  TransferHandle to_device(uint64_t dst, const void* src, size_t bytes,
                           TransferOptions options = {});
  TransferHandle to_host(void* dst, uint64_t src, size_t bytes, TransferOptions options = {});
  /// Waits for every transfer submitted so far.
  void synchronize();

  /// Pinned host memory from the engine's pool: transfers from and to it
  /// skip staging. Empty when no pinned memory is left.
  PinnedBlock allocate_host(size_t bytes) { return Pinned->allocate(bytes); }
  void free_host(PinnedBlock block) { Pinned->deallocate(block); }
  bool is_pinned(const void* pointer, size_t bytes) const;

  CUstream upload_stream() const;
  CUstream download_stream() const;
  MemoryBackend& backend() { return Backend; }
  const Options& options() const { return Opts; }
  /// Host threads helping with staged copies (resolved from options).
  unsigned copy_threads() const;

private:
  MemoryBackend& Backend;
  Options Opts;
  std::unique_ptr<PinnedHostPool> Pinned;
  std::unique_ptr<detail::CopyWorkers> Workers;
  std::unique_ptr<detail::TransferDirection> Up;
  std::unique_ptr<detail::TransferDirection> Down;
};

} // namespace gpukit::rt
