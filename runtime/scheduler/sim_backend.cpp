#include "runtime/scheduler/sim_backend.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace gpukit::rt::sched {

struct SimBackend::Kernel {
  std::string name;
  std::function<void(void**)> body;
  Nanos duration;
  std::vector<size_t> arg_sizes;
};

struct SimBackend::Graph {
  struct Node {
    const Kernel* kernel;
    std::vector<std::vector<char>> storage; ///< copies of the argument values
    std::vector<void*> args;                ///< pointers into storage
  };
  std::vector<Node> nodes;
};

struct SimBackend::Stream {
  int priority = 0;
  TimePoint busy_until{};
  std::unique_ptr<Graph> capture; ///< non-null while capturing
  bool alive = true;
};

struct SimBackend::Event {
  bool timing = false;
  bool recorded = false;
  TimePoint at{};
};

namespace {

template <typename T, typename Handle> T* from_handle(Handle h) { return reinterpret_cast<T*>(h); }
template <typename Handle, typename T> Handle to_handle(T* p) { return reinterpret_cast<Handle>(p); }

} // namespace

SimBackend::SimBackend(Clock& clock, StreamPriorities priorities) : Clk(clock), Priorities(priorities) {
  Default = create_stream(priorities.least);
}

SimBackend::~SimBackend() = default;

CUfunction SimBackend::add_kernel(std::string name, std::function<void(void**)> body, Nanos duration,
                                  std::vector<size_t> arg_sizes) {
  std::lock_guard lock(Mutex);
  Kernels.push_back(std::make_unique<Kernel>(Kernel{std::move(name), std::move(body), duration, std::move(arg_sizes)}));
  return to_handle<CUfunction>(Kernels.back().get());
}

SimBackend::Stream& SimBackend::stream_of(CUstream stream) const {
  if (!stream)
    return *from_handle<Stream>(Default);
  Stream* s = from_handle<Stream>(stream);
  if (!s->alive)
    throw Error(ErrorKind::Usage, "simulated stream used after destroy_stream()");
  return *s;
}

int SimBackend::priority_of(CUstream stream) const {
  std::lock_guard lock(Mutex);
  return stream_of(stream).priority;
}

TimePoint SimBackend::busy_until(CUstream stream) const {
  std::lock_guard lock(Mutex);
  return stream_of(stream).busy_until;
}

std::vector<SimBackend::LaunchRecord> SimBackend::history() const {
  std::lock_guard lock(Mutex);
  return History;
}

void SimBackend::keep_history(bool keep) {
  std::lock_guard lock(Mutex);
  KeepHistory = keep;
}

void SimBackend::clear_history() {
  std::lock_guard lock(Mutex);
  History.clear();
}

uint64_t SimBackend::launch_count() const {
  std::lock_guard lock(Mutex);
  return Launches;
}

CUstream SimBackend::create_stream(int priority) {
  // Clamp as the driver does: a priority outside the range gets the nearest end.
  int clamped = std::clamp(priority, Priorities.greatest, Priorities.least);
  std::lock_guard lock(Mutex);
  Streams.push_back(std::make_unique<Stream>());
  Streams.back()->priority = clamped;
  return to_handle<CUstream>(Streams.back().get());
}

void SimBackend::destroy_stream(CUstream stream) noexcept {
  // Streams stay allocated (a destroyed handle must not alias a new one in
  // the history) but refuse further use.
  std::lock_guard lock(Mutex);
  if (stream && stream != Default)
    from_handle<Stream>(stream)->alive = false;
}

CUevent SimBackend::create_event(bool timing) { return to_handle<CUevent>(new Event{timing, false, {}}); }

void SimBackend::destroy_event(CUevent event) noexcept { delete from_handle<Event>(event); }

void SimBackend::record(CUevent event, CUstream stream) {
  std::lock_guard lock(Mutex);
  Stream& s = stream_of(stream);
  if (s.capture)
    throw Error(ErrorKind::Internal, "event recorded on a simulated stream that is capturing a graph");
  Event* e = from_handle<Event>(event);
  e->recorded = true;
  e->at = std::max(Clk.now(), s.busy_until);
}

bool SimBackend::query(CUevent event) {
  std::lock_guard lock(Mutex);
  return Clk.now() >= from_handle<Event>(event)->at;
}

void SimBackend::wait(CUevent event) {
  TimePoint at;
  {
    std::lock_guard lock(Mutex);
    at = from_handle<Event>(event)->at;
  }
  Clk.sleep_until(at);
}

void SimBackend::stream_wait(CUstream stream, CUevent event) {
  std::lock_guard lock(Mutex);
  Stream& s = stream_of(stream);
  s.busy_until = std::max(s.busy_until, from_handle<Event>(event)->at);
}

bool SimBackend::query_stream(CUstream stream) {
  std::lock_guard lock(Mutex);
  return Clk.now() >= stream_of(stream).busy_until;
}

Nanos SimBackend::elapsed(CUevent start, CUevent end) {
  std::lock_guard lock(Mutex);
  const Event* a = from_handle<Event>(start);
  const Event* b = from_handle<Event>(end);
  if (!a->timing || !b->timing || !a->recorded || !b->recorded)
    throw Error(ErrorKind::Internal, "elapsed() needs two recorded timing events");
  if (Clk.now() < b->at)
    throw Error(ErrorKind::Internal, "elapsed() on an event that has not completed");
  return b->at - a->at;
}

void SimBackend::synchronize(CUstream stream) {
  TimePoint until;
  {
    std::lock_guard lock(Mutex);
    until = stream_of(stream).busy_until;
  }
  Clk.sleep_until(until);
}

void SimBackend::run(const Kernel& kernel, Stream& stream, void** args, bool from_graph) {
  TimePoint issued = Clk.now();
  // The body runs outside the lock: it is user code and may take long.
  kernel.body(args);
  Nanos took = kernel.duration.count() > 0 ? kernel.duration : Clk.now() - issued;
  std::lock_guard lock(Mutex);
  LaunchRecord r;
  r.start = std::max(issued, stream.busy_until);
  r.end = r.start + took;
  stream.busy_until = r.end;
  ++Launches;
  if (!KeepHistory)
    return;
  r.kernel = kernel.name;
  r.stream = to_handle<CUstream>(&stream);
  r.priority = stream.priority;
  r.issued = issued;
  r.from_graph = from_graph;
  History.push_back(std::move(r));
}

void SimBackend::launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream,
                        void** args) {
  if (!function)
    throw Error(ErrorKind::Usage, "launch of a null kernel on the simulation backend");
  const Kernel& kernel = *from_handle<Kernel>(function);
  Stream* s;
  {
    std::lock_guard lock(Mutex);
    s = &stream_of(stream);
    if (Graph* g = s->capture.get()) {
      Graph::Node node{&kernel, {}, {}};
      if (args == nullptr && !kernel.arg_sizes.empty())
        throw Error(ErrorKind::Usage, fmt::format("kernel '{}' takes {} arguments but was launched without any",
                                                  kernel.name, kernel.arg_sizes.size()));
      // Copy argument values now, as cuLaunchKernel does for graph nodes.
      for (size_t i = 0; i < kernel.arg_sizes.size(); ++i) {
        const char* value = static_cast<const char*>(args[i]);
        node.storage.emplace_back(value, value + kernel.arg_sizes[i]);
      }
      for (std::vector<char>& v : node.storage)
        node.args.push_back(v.data());
      g->nodes.push_back(std::move(node));
      return;
    }
  }
  run(kernel, *s, args, false);
}

void SimBackend::launch_host(CUstream stream, llvm::function_ref<void()> work) {
  Stream* s;
  {
    std::lock_guard lock(Mutex);
    s = &stream_of(stream);
    if (s->capture)
      throw Error(ErrorKind::Usage, "host work cannot be captured into a graph");
  }
  synchronize(stream);
  TimePoint issued = Clk.now();
  work();
  TimePoint done = Clk.now();
  std::lock_guard lock(Mutex);
  s->busy_until = std::max(s->busy_until, done);
  ++Launches;
  if (KeepHistory)
    History.push_back({"<host>", stream ? stream : Default, s->priority, issued, issued, done, false});
}

void SimBackend::begin_capture(CUstream stream) {
  std::lock_guard lock(Mutex);
  Stream& s = stream_of(stream);
  if (s.capture)
    throw Error(ErrorKind::Usage, "the simulated stream is already capturing a graph");
  s.capture = std::make_unique<Graph>();
}

CUgraphExec SimBackend::end_capture(CUstream stream) {
  std::lock_guard lock(Mutex);
  Stream& s = stream_of(stream);
  if (!s.capture)
    throw Error(ErrorKind::Usage, "end_capture() on a simulated stream that is not capturing");
  return to_handle<CUgraphExec>(s.capture.release());
}

void SimBackend::abort_capture(CUstream stream) noexcept {
  std::lock_guard lock(Mutex);
  if (stream || Default)
    from_handle<Stream>(stream ? stream : Default)->capture.reset();
}

void SimBackend::launch_graph(CUgraphExec graph, CUstream stream) {
  const Graph& g = *from_handle<Graph>(graph);
  Stream* s;
  {
    std::lock_guard lock(Mutex);
    s = &stream_of(stream);
  }
  for (const Graph::Node& node : g.nodes)
    run(*node.kernel, *s, const_cast<void**>(node.args.data()), true);
}

void SimBackend::destroy_graph(CUgraphExec graph) noexcept { delete from_handle<Graph>(graph); }

} // namespace gpukit::rt::sched
