#include "dsl/tune.hpp"

#include "codegen/cuda_emitter.hpp"
#include "codegen/passes/pipeline.hpp"
#include "dsl/ir_builder.hpp"
#include "dsl/operand_layout.hpp"
#include "dsl/tune_bench.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <limits>
#include <thread>

namespace gpukit {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// One compiled kernel shape and the candidates (grids) that launch it.
struct KernelShapeGroup {
  codegen::CudaKernel cuda;
  const rt::Kernel* kernel = nullptr;
  std::exception_ptr error;
  std::vector<size_t> members; ///< indices into TuneReport::candidates, in enumeration order
  double best_ms = std::numeric_limits<double>::infinity();
};

/// Compiles every shape's kernel, `threads` at a time (NVRTC compiles
/// distinct programs concurrently; KernelCache compiles each key once).
void compile_all(std::vector<KernelShapeGroup>& shapes, unsigned threads) {
  rt::KernelCache& cache = rt::Runtime::get().kernels();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next++) < shapes.size();) {
      KernelShapeGroup& s = shapes[k];
      try {
        s.kernel = &cache.get({s.cuda.name, s.cuda.source, s.cuda.nvrtc_options});
      } catch (...) {
        s.error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
}

std::string error_text(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}


} // namespace

// --- The report ------------------------------------------------------------------

const TuneCandidate& TuneReport::default_candidate() const {
  for (const TuneCandidate& c : candidates)
    if (c.is_default)
      return c;
  throw Error(ErrorKind::Internal, "tuning report without a default candidate");
}

const TuneCandidate& TuneReport::winner() const {
  for (const TuneCandidate& c : candidates)
    if (c.is_winner)
      return c;
  return default_candidate();
}

double TuneReport::speedup() const {
  const TuneCandidate& w = winner();
  if (!w.is_default && confirm_winner_ms > 0)
    return confirm_default_ms / confirm_winner_ms;
  const TuneCandidate& d = default_candidate();
  return w.measured && d.measured && w.median_ms > 0 ? d.median_ms / w.median_ms : 1.0;
}

// --- Tuning ------------------------------------------------------------------------

TuneReport tune_program(const ir::Program& program, uint64_t n, const TuneOptions& options) {
  Clock::time_point start = Clock::now();
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.on_gpu())
    throw Error(ErrorKind::Unavailable,
                fmt::format("tuning needs a GPU: {}; the heuristic launch configuration stays in "
                            "use",
                            runtime.fallback_reason()));
  if (n == 0)
    throw Error(ErrorKind::Usage, "cannot tune a kernel for 0 elements; give a size of at least 1");

  ir::Program optimized = ir::optimize(program);
  const rt::DeviceInfo& device = *runtime.device();
  codegen::TargetLimits limits = target_limits(device);
  codegen::ElementwiseProblem problem = codegen::describe_elementwise(optimized, n, options.aligned);
  codegen::TuningSpace space = codegen::elementwise_space(problem, limits);
  codegen::TuningSpace::Enumeration points = space.enumerate();
  bool index64 = codegen::needs_index64(n);

  TuneReport r;
  r.label = optimized.label.empty() ? program.label : optimized.label;
  r.n = n;
  r.key = elementwise_tuning_key(optimized, n, options.aligned, device);
  r.device = fmt::format("{} ({}, driver {})", device.name, device.arch(), device.driver_version);
  r.space_size = space.size();
  for (codegen::PrunedConfig& p : points.pruned)
    r.pruned.push_back({p.config, space.describe(p.config), std::move(p.constraint), std::move(p.reason)});

  // One shape per compile part, in enumeration order: the default's first.
  std::vector<KernelShapeGroup> shapes;
  std::vector<size_t> shape_of;
  std::vector<codegen::ElementwiseConfig> typed;
  std::map<std::string, size_t> shape_index;
  for (size_t k = 0; k < points.candidates.size(); ++k) {
    const codegen::TuningConfig& config = points.candidates[k];
    codegen::ElementwiseConfig e = *codegen::ElementwiseConfig::from_config(config);
    std::string part = space.compile_part(config).to_string();
    auto [it, fresh] = shape_index.emplace(part, shapes.size());
    if (fresh) {
      KernelShapeGroup s;
      s.cuda = codegen::emit_cuda(optimized, e.emit_options(index64));
      shapes.push_back(std::move(s));
    }
    KernelShapeGroup& s = shapes[it->second];
    s.members.push_back(k);
    shape_of.push_back(it->second);
    typed.push_back(e);
    TuneCandidate c;
    c.config = config;
    c.description = space.describe(config);
    c.kernel = s.cuda.name;
    c.grid = codegen::elementwise_grid(e, n, s.cuda.pack_width, limits);
    c.is_default = k == 0;
    r.candidates.push_back(std::move(c));
  }
  r.kernel = r.candidates[0].kernel;

  Clock::time_point compile_start = Clock::now();
  unsigned threads = options.compile_threads
                         ? options.compile_threads
                         : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  compile_all(shapes, std::min<unsigned>(threads, static_cast<unsigned>(shapes.size())));
  r.compile_s = seconds_since(compile_start);
  for (const KernelShapeGroup& s : shapes)
    r.kernels_compiled += s.kernel ? 1 : 0;
  if (shapes[0].error)
    std::rethrow_exception(shapes[0].error); // the default must compile: nothing to compare with

  Clock::time_point measure_start = Clock::now();
  detail::TuneBench bench(optimized, n, options);
  r.bytes_per_launch = bench.bytes_per_launch();
  r.buffer_sets = bench.sets();
  r.buffer_bytes = bench.buffer_bytes();

  // The default's output on set 0 is what every candidate must reproduce.
  bench.launch(*shapes[0].kernel, r.candidates[0].grid, typed[0].shape.block_size, 0);
  bench.keep_reference();

  double best = std::numeric_limits<double>::infinity();
  std::vector<bool> tried(r.candidates.size(), false);
  auto measure = [&](size_t k) {
    tried[k] = true;
    TuneCandidate& c = r.candidates[k];
    KernelShapeGroup& s = shapes[shape_of[k]];
    if (!s.kernel) {
      c.problem = "does not compile: " + error_text(s.error);
      return;
    }
    if (k != 0 && seconds_since(start) > options.time_budget_s) {
      c.problem = fmt::format("not measured: the {:g} s time budget ran out", options.time_budget_s);
      return;
    }
    unsigned block = typed[k].shape.block_size;
    if (options.verify && k != 0) {
      std::string difference = bench.verify(*s.kernel, c.grid, block);
      if (!difference.empty()) {
        c.problem = "wrong answer: " + difference;
        return;
      }
    }
    double give_up = std::isfinite(best) ? best * options.early_stop_ratio : 0;
    detail::BenchTiming t = bench.time(*s.kernel, c.grid, block, options.warmup,
                                       options.repetitions, options.early_check, give_up);
    c.measured = true;
    c.median_ms = t.median_ms;
    c.repetitions = t.repetitions;
    c.stopped_early = t.stopped_early;
    c.gbs = t.median_ms > 0 ? r.bytes_per_launch / (t.median_ms * 1e6) : 0;
    best = std::min(best, t.median_ms);
    s.best_ms = std::min(s.best_ms, t.median_ms);
  };

  // Stage 1: the default, then every other shape at the default's grid
  // policy (or its first kept grid where the constraints pruned that one).
  measure(0);
  for (size_t g = 1; g < shapes.size(); ++g) {
    size_t representative = shapes[g].members.front();
    for (size_t k : shapes[g].members)
      if (space.with_launch_of(r.candidates[k].config, r.candidates[0].config) ==
          r.candidates[k].config)
        representative = k;
    measure(representative);
  }
  // Stage 2: every grid of the fastest shapes.
  std::vector<size_t> order(shapes.size());
  for (size_t g = 0; g < shapes.size(); ++g)
    order[g] = g;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return shapes[a].best_ms < shapes[b].best_ms; });
  unsigned finalists = 0;
  for (size_t g : order) {
    if (finalists == options.launch_finalists || !std::isfinite(shapes[g].best_ms))
      break;
    ++finalists;
    for (size_t k : shapes[g].members)
      if (!tried[k])
        measure(k);
  }
  for (size_t k = 0; k < r.candidates.size(); ++k)
    if (!tried[k])
      r.candidates[k].problem = fmt::format(
          "not measured: grids are tried for the {} fastest kernel shapes", options.launch_finalists);

  // The winner: the fastest verified candidate, if it beats the default by min_gain.
  size_t winner = 0;
  for (size_t k = 1; k < r.candidates.size(); ++k)
    if (r.candidates[k].measured && r.candidates[k].median_ms < r.candidates[winner].median_ms)
      winner = k;
  if (winner != 0 &&
      r.candidates[winner].median_ms > r.candidates[0].median_ms * (1.0 - options.min_gain)) {
    r.notes.push_back(fmt::format("the fastest candidate ({}) is within {:g}% of the default: the "
                                  "default is kept",
                                  r.candidates[winner].description, options.min_gain * 100));
    winner = 0;
  }
  if (winner != 0) {
    // Confirm head to head: interleaved rounds of both, so a winner picked
    // by noise or by a clock change between the stages does not replace
    // the default.
    const TuneCandidate& w = r.candidates[winner];
    const rt::Kernel& wk = *shapes[shape_of[winner]].kernel;
    const rt::Kernel& dk = *shapes[0].kernel;
    std::vector<double> dm, wm;
    for (int round = 0; round < 3; ++round) {
      dm.push_back(bench.time(dk, r.candidates[0].grid, typed[0].shape.block_size, 1,
                              options.repetitions, options.repetitions, 0).median_ms);
      wm.push_back(bench.time(wk, w.grid, typed[winner].shape.block_size, 1, options.repetitions,
                              options.repetitions, 0).median_ms);
    }
    std::sort(dm.begin(), dm.end());
    std::sort(wm.begin(), wm.end());
    r.confirm_default_ms = dm[1];
    r.confirm_winner_ms = wm[1];
    if (r.confirm_winner_ms > r.confirm_default_ms * (1.0 - options.min_gain)) {
      r.notes.push_back(fmt::format("{} did not confirm head to head ({:.4f} ms against the "
                                    "default's {:.4f} ms): the default is kept",
                                    w.description, r.confirm_winner_ms, r.confirm_default_ms));
      winner = 0;
    } else {
      r.notes.push_back(fmt::format("confirmed head to head over 3 interleaved rounds: {:.4f} ms "
                                    "against the default's {:.4f} ms",
                                    r.confirm_winner_ms, r.confirm_default_ms));
    }
  }
  r.candidates[winner].is_winner = true;
  r.measure_s = seconds_since(measure_start);

  if (options.store) {
    rt::TuningDatabase& db = options.database ? *options.database : rt::TuningDatabase::process();
    rt::TuningRecord record;
    record.key = r.key;
    record.config = r.candidates[winner].config.to_map();
    record.n = n;
    bool confirmed = winner != 0 && r.confirm_winner_ms > 0;
    record.best_ms = confirmed ? r.confirm_winner_ms : r.candidates[winner].median_ms;
    record.default_ms = confirmed ? r.confirm_default_ms : r.candidates[0].median_ms;
    record.candidates = static_cast<unsigned>(
        std::count_if(r.candidates.begin(), r.candidates.end(), [](const TuneCandidate& c) { return c.measured; }));
    record.tuned_at = static_cast<int64_t>(std::time(nullptr));
    record.label = r.label;
    std::string error;
    r.stored = db.store(record, &error);
    r.database = r.stored ? (db.path().empty() ? std::string("this process's memory (no cache directory)")
                                               : db.path())
                          : error;
  }

  // Measured candidates fastest first, then the rest as enumerated.
  std::stable_sort(r.candidates.begin(), r.candidates.end(),
                   [](const TuneCandidate& a, const TuneCandidate& b) {
                     if (a.measured != b.measured)
                       return a.measured;
                     return a.measured && a.median_ms < b.median_ms;
                   });
  r.wall_s = seconds_since(start);
  return r;
}

std::vector<TuneReport> tune_program(const ir::Program& program, llvm::ArrayRef<uint64_t> sizes,
                                     const TuneOptions& options) {
  std::vector<TuneReport> reports;
  for (uint64_t n : sizes)
    reports.push_back(tune_program(program, n, options));
  return reports;
}

// --- The C++ front end ---------------------------------------------------------------

namespace detail {

ir::Program assignment_program(const AssignmentType& type, const AssignmentCall& call) {
  // The expression engine's layout and label: the program is the one the
  // assignment's kernel variant is built from.
  OperandLayout layout = make_layout(call);
  ir::Program program;
  program.label = make_label(type, call, layout);
  IrBuilder builder(program, layout);
  type.build(builder);
  return program;
}

} // namespace detail
} // namespace gpukit
