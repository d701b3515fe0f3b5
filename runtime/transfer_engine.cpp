#include "runtime/transfer_engine.hpp"

#include "runtime/transfer_copy_workers.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gpukit::rt {

namespace detail {

/// One transfer, shared by its handles and the worker running it.
struct TransferState {
  MemoryBackend* Backend = nullptr;
  size_t Bytes = 0;
  std::mutex M;
  std::condition_variable Changed;
  // Guarded by M.
  bool Queued = false;   ///< every device-side copy is submitted; Event marks their end
  bool HostDone = false; ///< no host work left (a staged download's copy-out)
  BackendEvent Event;
  std::exception_ptr Failure;

  ~TransferState() {
    if (Event)
      Backend->destroy(Event);
  }
};

struct TransferJob {
  std::shared_ptr<TransferState> State;
  uint64_t Device = 0;
  const void* Src = nullptr; ///< upload
  void* Dst = nullptr;       ///< download
  size_t Bytes = 0;
  bool Pinned = false;
  BackendEvent After;
};

/// How a pageable transfer is cut into chunks: chunk 0 ends where the host
/// buffer reaches a page boundary plus a chunk, so every later chunk starts
/// page-aligned in host memory (aligned non-temporal stores on download).
struct ChunkPlan {
  static constexpr size_t kPage = 4096;

  ChunkPlan(const void* host, size_t bytes, size_t chunk) : Bytes(bytes), Chunk(chunk) {
    size_t misalign = reinterpret_cast<uintptr_t>(host) % kPage;
    First = std::min(bytes, chunk - misalign);
    Count = 1 + (bytes - First + chunk - 1) / chunk;
  }
  size_t offset(size_t i) const { return i == 0 ? 0 : First + (i - 1) * Chunk; }
  size_t length(size_t i) const { return std::min(i == 0 ? First : Chunk, Bytes - offset(i)); }
  size_t Bytes, Chunk, First, Count;
};

/// The pinned buffers that staged chunks pass through. A buffer comes back
/// with the event of its DMA; the next user waits for it first.
class StagingSlots {
public:
  StagingSlots(MemoryBackend& backend, PinnedHostPool& pinned) : Backend(backend), Pinned(pinned) {}
  ~StagingSlots() {
    for (BackendEvent e : Events)
      if (e)
        Backend.destroy(e);
    for (PinnedBlock b : Blocks)
      Pinned.deallocate(b);
  }

  /// Grows to `count` buffers of `bytes` (called between transfers only).
  void ensure(size_t count, size_t bytes) {
    while (Blocks.size() < count) {
      PinnedBlock block = Pinned.allocate(bytes);
      if (!block)
        throw Error(ErrorKind::OutOfMemory,
                    fmt::format("transfer engine: cannot pin {} staging buffers of {} bytes for "
                                "pageable copies; pass pinned host memory, or lower "
                                "TransferEngine::Options::chunk_bytes",
                                count, bytes));
      std::lock_guard<std::mutex> lock(M);
      Free.push_back(Blocks.size());
      Blocks.push_back(block);
      Events.push_back({});
    }
  }

  size_t acquire() {
    size_t slot;
    BackendEvent pending;
    {
      std::unique_lock<std::mutex> lock(M);
      Available.wait(lock, [&] { return !Free.empty(); });
      slot = Free.back();
      Free.pop_back();
      pending = std::exchange(Events[slot], BackendEvent{});
    }
    if (pending) {
      Backend.synchronize(pending);
      Backend.destroy(pending);
    }
    return slot;
  }

  void release(size_t slot, BackendEvent pending) {
    {
      std::lock_guard<std::mutex> lock(M);
      Events[slot] = pending;
      Free.push_back(slot);
    }
    Available.notify_one();
  }

  void* data(size_t slot) const { return Blocks[slot].data; }
  size_t count() const { return Blocks.size(); }

private:
  MemoryBackend& Backend;
  PinnedHostPool& Pinned;
  std::mutex M;
  std::condition_variable Available;
  std::vector<size_t> Free;
  std::vector<PinnedBlock> Blocks;   ///< grown by the worker thread only
  std::vector<BackendEvent> Events;
};

/// A copy stream, its worker thread (which runs transfers one after the
/// other, in submission order) and its staging buffers.
class TransferDirection {
public:
  TransferDirection(MemoryBackend& backend, PinnedHostPool& pinned, CopyWorkers& workers,
                    const TransferEngine::Options& options, bool upload)
      : Backend(backend), Workers(workers), Opts(options), Upload(upload), Slots(backend, pinned) {
    Stream = Backend.create_stream();
    Worker = std::thread([this] { loop(); });
  }

  ~TransferDirection() {
    {
      std::lock_guard<std::mutex> lock(M);
      Stop = true;
    }
    Work.notify_all();
    Worker.join();
    try {
      Backend.synchronize_stream(Stream);
    } catch (...) {
    }
    Backend.destroy_stream(Stream);
  }

  void submit(TransferJob job) {
    {
      std::lock_guard<std::mutex> lock(M);
      Queue.push_back(std::move(job));
    }
    Work.notify_one();
  }

  void synchronize() {
    {
      std::unique_lock<std::mutex> lock(M);
      Idle.wait(lock, [&] { return Queue.empty() && !Busy; });
    }
    Backend.synchronize_stream(Stream);
  }

  CUstream stream() const { return Stream; }

private:
  void loop() {
    for (;;) {
      TransferJob job;
      {
        std::unique_lock<std::mutex> lock(M);
        Work.wait(lock, [&] { return Stop || !Queue.empty(); });
        if (Queue.empty())
          return;
        job = std::move(Queue.front());
        Queue.pop_front();
        Busy = true;
      }
      run(job);
      {
        std::lock_guard<std::mutex> lock(M);
        Busy = false;
      }
      Idle.notify_all();
    }
  }

  void run(TransferJob& job) {
    try {
      if (job.After) {
        Backend.wait(Stream, job.After);
        Backend.destroy(job.After);
        job.After = {};
      }
      if (job.Pinned) {
        if (Upload)
          Backend.copy_to_device(job.Device, job.Src, job.Bytes, Stream);
        else
          Backend.copy_to_host(job.Dst, job.Device, job.Bytes, Stream);
        publish(*job.State, Backend.record(Stream), /*host_done=*/true);
      } else {
        pageable(job);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.State->M);
      job.State->Failure = std::current_exception();
      job.State->Queued = job.State->HostDone = true;
      job.State->Changed.notify_all();
    }
  }

  static void publish(TransferState& state, BackendEvent event, bool host_done) {
    std::lock_guard<std::mutex> lock(state.M);
    if (state.Event)
      state.Backend->destroy(state.Event);
    state.Event = event;
    state.Queued = true;
    state.HostDone = host_done;
    state.Changed.notify_all();
  }

  /// Host memory of chunk range [offset, offset + bytes) of the job.
  char* host(const TransferJob& job, size_t offset) const {
    return Upload ? const_cast<char*>(static_cast<const char*>(job.Src)) + offset
                  : static_cast<char*>(job.Dst) + offset;
  }

  void copy(void* dst, const void* src, size_t bytes) const {
    if (Opts.nontemporal)
      stream_copy(dst, src, bytes);
    else
      std::memcpy(dst, src, bytes);
  }

  /// DMA between the device and host memory the engine can reach directly.
  void dma(const TransferJob& job, size_t offset, void* pinned, size_t bytes) {
    if (Upload)
      Backend.copy_to_device(job.Device + offset, pinned, bytes, Stream);
    else
      Backend.copy_to_host(pinned, job.Device + offset, bytes, Stream);
  }

  /// Upload of chunk i: a lane takes a staging buffer (waiting for its last
  /// DMA), copies the chunk in, queues the DMA and hands the buffer back with
  /// that DMA's event. Lanes never wait on each other.
  void stage_upload(const TransferJob& job, const ChunkPlan& plan, size_t i) {
    size_t offset = plan.offset(i), bytes = plan.length(i);
    size_t slot = Slots.acquire();
    try {
      copy(Slots.data(slot), host(job, offset), bytes);
      dma(job, offset, Slots.data(slot), bytes);
      Slots.release(slot, Backend.record(Stream));
    } catch (...) {
      Slots.release(slot, {});
      throw;
    }
  }

  /// Download: the staging buffers form a ring. DMAs for the first chunks
  /// are queued at once; the lane that copies chunk i out of its buffer
  /// queues the DMA of chunk i + ring into it, so the bus never waits for
  /// the host threads while a buffer is free.
  void download(const TransferJob& job, const ChunkPlan& plan, unsigned lanes) {
    std::vector<size_t> ring;
    size_t depth = std::min(Slots.count(), plan.Count);
    for (size_t k = 0; k < depth; ++k)
      ring.push_back(Slots.acquire());
    std::mutex m;
    std::condition_variable queued;
    std::vector<BackendEvent> events(plan.Count);
    bool failed = false;
    auto issue = [&](size_t i) {
      size_t offset = plan.offset(i);
      dma(job, offset, Slots.data(ring[i % depth]), plan.length(i));
      BackendEvent event = Backend.record(Stream);
      std::lock_guard<std::mutex> lock(m);
      events[i] = event;
      queued.notify_all();
    };
    std::atomic<size_t> next{0};
    try {
      for (size_t i = 0; i < depth; ++i)
        issue(i);
      Workers.run(lanes, [&](unsigned) {
        try {
          for (size_t i = next++; i < plan.Count; i = next++) {
            BackendEvent event;
            {
              std::unique_lock<std::mutex> lock(m);
              queued.wait(lock, [&] { return failed || events[i]; });
              if (failed)
                return;
              event = std::exchange(events[i], BackendEvent{});
            }
            Backend.synchronize(event);
            Backend.destroy(event);
            copy(host(job, plan.offset(i)), Slots.data(ring[i % depth]), plan.length(i));
            if (i + depth < plan.Count)
              issue(i + depth);
          }
        } catch (...) {
          std::lock_guard<std::mutex> lock(m);
          failed = true;
          queued.notify_all();
          throw;
        }
      });
    } catch (...) {
      // Let the queued DMAs finish before the buffers are reused.
      Backend.synchronize_stream(Stream);
      for (BackendEvent e : events)
        if (e)
          Backend.destroy(e);
      for (size_t slot : ring)
        Slots.release(slot, {});
      throw;
    }
    for (size_t slot : ring)
      Slots.release(slot, {});
  }

  /// Chunks go to the lanes in order, each lane taking the next one left.
  void pageable(TransferJob& job) {
    const ChunkPlan plan(Upload ? job.Src : job.Dst, job.Bytes, Opts.chunk_bytes);
    unsigned lanes = std::min<size_t>(Workers.threads() + 1, plan.Count);
    // Four buffers beyond one per lane keep DMAs queued while lanes copy.
    Slots.ensure(Opts.staging_buffers ? Opts.staging_buffers : Workers.threads() + 5,
                 Opts.chunk_bytes);
    if (Upload) {
      std::atomic<size_t> next{0};
      Workers.run(lanes, [&](unsigned) {
        for (size_t i = next++; i < plan.Count; i = next++)
          stage_upload(job, plan, i);
      });
    } else {
      download(job, plan, lanes);
    }
    // Every DMA is queued (a download's are done and copied out).
    publish(*job.State, Backend.record(Stream), /*host_done=*/true);
  }

  MemoryBackend& Backend;
  CopyWorkers& Workers;
  const TransferEngine::Options& Opts;
  const bool Upload;
  CUstream Stream = nullptr;
  StagingSlots Slots;

  std::thread Worker;
  std::mutex M;
  std::condition_variable Work;
  std::condition_variable Idle;
  std::deque<TransferJob> Queue;
  bool Busy = false;
  bool Stop = false;
};

} // namespace detail

// TransferHandle ---------------------------------------------------------------

bool TransferHandle::ready() const {
  if (!State)
    return true;
  BackendEvent event;
  {
    std::lock_guard<std::mutex> lock(State->M);
    if (State->Failure)
      return true;
    if (!State->Queued || !State->HostDone)
      return false;
    event = State->Event;
  }
  return !event || State->Backend->query(event);
}

void TransferHandle::wait() const {
  if (!State)
    return;
  BackendEvent event;
  {
    std::unique_lock<std::mutex> lock(State->M);
    State->Changed.wait(lock, [&] { return State->Queued && State->HostDone; });
    if (State->Failure)
      std::rethrow_exception(State->Failure);
    event = State->Event;
  }
  if (event)
    State->Backend->synchronize(event);
}

void TransferHandle::order_before(CUstream stream) const {
  if (!State)
    return;
  BackendEvent event;
  {
    std::unique_lock<std::mutex> lock(State->M);
    State->Changed.wait(lock, [&] { return State->Queued; });
    if (State->Failure)
      std::rethrow_exception(State->Failure);
    event = State->Event;
  }
  if (event)
    State->Backend->wait(stream, event);
}

size_t TransferHandle::bytes() const { return State ? State->Bytes : 0; }

// TransferEngine ---------------------------------------------------------------

namespace {

unsigned default_copy_threads() {
  // Staging is bound by memory bandwidth, which takes many cores to
  // saturate; two are left to the program and the driver.
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, std::min(14u, hardware > 2 ? hardware - 2 : 1));
}

std::shared_ptr<detail::TransferState> new_state(MemoryBackend& backend, size_t bytes) {
  auto state = std::make_shared<detail::TransferState>();
  state->Backend = &backend;
  state->Bytes = bytes;
  if (bytes == 0)
    state->Queued = state->HostDone = true;
  return state;
}

} // namespace

TransferEngine::TransferEngine(MemoryBackend& backend, Options options)
    : Backend(backend), Opts(options) {
  if (Opts.chunk_bytes == 0 || Opts.chunk_bytes % detail::ChunkPlan::kPage != 0)
    throw Error(ErrorKind::Usage,
                fmt::format("TransferEngine: chunk_bytes is {}; it must be a positive multiple of "
                            "4096",
                            Opts.chunk_bytes));
  Pinned = std::make_unique<PinnedHostPool>(Backend);
  unsigned threads = Opts.copy_threads < 0 ? default_copy_threads()
                                           : static_cast<unsigned>(Opts.copy_threads);
  Workers = std::make_unique<detail::CopyWorkers>(threads);
  Up = std::make_unique<detail::TransferDirection>(Backend, *Pinned, *Workers, Opts, true);
  Down = std::make_unique<detail::TransferDirection>(Backend, *Pinned, *Workers, Opts, false);
}

TransferEngine::~TransferEngine() = default;

bool TransferEngine::is_pinned(const void* pointer, size_t bytes) const {
  return Pinned->contains(pointer, bytes);
}

TransferHandle TransferEngine::to_device(uint64_t dst, const void* src, size_t bytes,
                                         TransferOptions options) {
  auto state = new_state(Backend, bytes);
  if (bytes == 0)
    return TransferHandle(state);
  detail::TransferJob job;
  job.State = state;
  job.Device = dst;
  job.Src = src;
  job.Bytes = bytes;
  job.Pinned = options.pinned || is_pinned(src, bytes);
  // Recorded now, in the caller's order, not when the worker gets to it.
  if (options.after)
    job.After = Backend.record(options.after);
  Up->submit(std::move(job));
  return TransferHandle(state);
}

TransferHandle TransferEngine::to_host(void* dst, uint64_t src, size_t bytes,
                                       TransferOptions options) {
  auto state = new_state(Backend, bytes);
  if (bytes == 0)
    return TransferHandle(state);
  detail::TransferJob job;
  job.State = state;
  job.Device = src;
  job.Dst = dst;
  job.Bytes = bytes;
  job.Pinned = options.pinned || is_pinned(dst, bytes);
  if (options.after)
    job.After = Backend.record(options.after);
  Down->submit(std::move(job));
  return TransferHandle(state);
}

void TransferEngine::synchronize() {
  Up->synchronize();
  Down->synchronize();
}

CUstream TransferEngine::upload_stream() const { return Up->stream(); }
unsigned TransferEngine::copy_threads() const { return Workers->threads(); }
CUstream TransferEngine::download_stream() const { return Down->stream(); }

} // namespace gpukit::rt
