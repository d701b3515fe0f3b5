// HostMemoryBackend: the memory pool's backend over ordinary host memory, for
// the CPU fallback and for testing the pool's policy in CI without a GPU.
// Memory is real (aligned_alloc), copies are memcpy and happen at once; what
// is simulated is the *ordering*: streams are opaque ids and an event is
// complete when its HostEventSource says so.
//
//   auto events = std::make_shared<ManualEvents>();
//   auto backend = std::make_unique<HostMemoryBackend>(HostMemoryBackend::Options{.events = events});
//   ...; events->complete(stream_a);   // "the GPU has finished stream_a's work"
//
// With the default ImmediateEvents every event is complete when recorded,
// which is the truth for host work. `capacity` makes reserve() report out of
// memory past a limit, as a full device would.
#pragma once

#include "runtime/memory_backend.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace gpukit::rt {

/// Decides when a host "event" is complete. Thread-safe.
class HostEventSource {
public:
  virtual ~HostEventSource() = default;
  virtual uint64_t record(CUstream stream) = 0;
  virtual bool query(uint64_t event) = 0;
  /// The host waits: on return the event is complete.
  virtual void synchronize(uint64_t event) = 0;
  /// The host waits for everything recorded on `stream` so far.
  virtual void synchronize_stream(CUstream stream) = 0;
  virtual void release(uint64_t event) = 0;
};

/// Host work is done when submitted: every event is complete at once.
class ImmediateEvents final : public HostEventSource {
public:
  uint64_t record(CUstream) override { return Next.fetch_add(1, std::memory_order_relaxed); }
  bool query(uint64_t) override { return true; }
  void synchronize(uint64_t) override {}
  void synchronize_stream(CUstream) override {}
  void release(uint64_t) override {}

private:
  std::atomic<uint64_t> Next{1};
};

/// Events that complete only when a test says so (or when the host waits
/// on them), to test stream-ordered reuse: a block freed on stream A must
/// not reach stream B before an event says A is done with it.
class ManualEvents final : public HostEventSource {
public:
  uint64_t record(CUstream stream) override;
  bool query(uint64_t event) override;
  void synchronize(uint64_t event) override;
  void synchronize_stream(CUstream stream) override;
  void release(uint64_t event) override;

  /// Completes every event recorded on `stream` so far.
  void complete(CUstream stream);
  /// Events recorded on `stream` from now on complete at once (the stream
  /// has no pending work), or, with false, wait for complete() again.
  void set_auto_complete(CUstream stream, bool on);
  void complete_all();
  /// How many events were recorded, and how many times the host blocked
  /// (synchronize or synchronize_stream): a test can check that the pool
  /// did not stall.
  uint64_t recorded() const;
  uint64_t host_waits() const;
  /// Events recorded and not yet released.
  size_t live() const;

private:
  struct Event {
    CUstream Stream = nullptr;
    bool Done = false;
  };
  mutable std::mutex M;
  std::map<uint64_t, Event> Events;
  std::vector<CUstream> AutoComplete;
  uint64_t Next = 1;
  uint64_t Recorded = 0;
  uint64_t Waits = 0;
};

class HostMemoryBackend final : public MemoryBackend {
public:
  struct Options {
    /// reserve() reports out of memory beyond this many bytes in segments.
    size_t capacity = SIZE_MAX;
    /// allocate_pinned() reports out of memory beyond this many bytes.
    size_t pinned_capacity = SIZE_MAX;
    /// Default: ImmediateEvents.
    std::shared_ptr<HostEventSource> events = nullptr;
  };

  HostMemoryBackend() : HostMemoryBackend(Options{}) {}
  explicit HostMemoryBackend(Options options);
  ~HostMemoryBackend() override;

  std::string_view memory_name() const override { return "host"; }
  uint64_t reserve(size_t bytes) override;
  void release(uint64_t address, size_t bytes) override;
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* pointer, size_t bytes) override;
  void copy_to_device(uint64_t dst, const void* src, size_t bytes, CUstream stream) override;
  void copy_to_host(void* dst, uint64_t src, size_t bytes, CUstream stream) override;
  void copy_on_device(uint64_t dst, uint64_t src, size_t bytes, CUstream stream) override;
  void fill(uint64_t dst, size_t bytes, uint8_t value, CUstream stream) override;
  CUstream create_stream() override;
  void destroy_stream(CUstream) override {}
  void synchronize_stream(CUstream stream) override { Events->synchronize_stream(stream); }
  BackendEvent record(CUstream stream) override { return {Events->record(stream)}; }
  bool query(BackendEvent event) override { return Events->query(event.handle); }
  void synchronize(BackendEvent event) override { Events->synchronize(event.handle); }
  void wait(CUstream, BackendEvent) override {}
  void destroy(BackendEvent event) override { Events->release(event.handle); }

  /// Bytes currently held in segments and in pinned blocks; segments
  /// reserved and released so far.
  size_t reserved_bytes() const { return Reserved.load(); }
  size_t pinned_bytes() const { return Pinned.load(); }
  uint64_t reserve_calls() const { return ReserveCalls.load(); }
  uint64_t release_calls() const { return ReleaseCalls.load(); }
  HostEventSource& events() { return *Events; }

private:
  Options Opts;
  std::shared_ptr<HostEventSource> Events;
  std::atomic<size_t> Reserved{0};
  std::atomic<size_t> Pinned{0};
  std::atomic<uint64_t> ReserveCalls{0};
  std::atomic<uint64_t> ReleaseCalls{0};
  std::atomic<uintptr_t> NextStream{0x5eed0001};
};

} // namespace gpukit::rt
