#include "dsl/tuned_launch.hpp"

#include "dsl/tune.hpp"
#include "runtime/device.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit {

namespace {

std::string output_dtypes(const ir::Program& p) {
  std::string s;
  for (const ir::Output& o : p.outputs())
    s += fmt::format("{}{}", s.empty() ? "" : ",", short_name(o.type));
  return s;
}

codegen::TuningConfig config_from_record(const codegen::TuningSpace& space,
                                         const std::map<std::string, int64_t>& stored) {
  // In the space's dimension order; unknown names stay, so contains() rejects them.
  codegen::TuningConfig c;
  for (const codegen::TuningDimension& d : space.dimensions()) {
    auto it = stored.find(d.name);
    if (it != stored.end())
      c.set(d.name, it->second);
  }
  for (const auto& [name, value] : stored)
    if (!c.get(name))
      c.set(name, value);
  return c;
}

} // namespace

// --- Keys and limits -------------------------------------------------------------

codegen::TargetLimits target_limits(const rt::DeviceInfo& device) {
  codegen::TargetLimits l = codegen::TargetLimits::for_arch(static_cast<unsigned>(device.sm_major),
                                                            static_cast<unsigned>(device.sm_minor));
  if (device.sm_count > 0)
    l.sm_count = static_cast<unsigned>(device.sm_count);
  if (device.max_threads_per_sm > 0)
    l.max_threads_per_sm = static_cast<unsigned>(device.max_threads_per_sm);
  if (device.l2_bytes > 0)
    l.l2_bytes = device.l2_bytes;
  return l;
}

rt::TuningKey elementwise_tuning_key(const ir::Program& optimized, uint64_t n, bool aligned,
                                     const rt::DeviceInfo& device) {
  rt::TuningKey key;
  key.kernel = fmt::format("ew/{:016x}/{}", codegen::tuning_hash(optimized),
                           aligned ? "aligned" : "unaligned");
  key.dtype = output_dtypes(optimized);
  key.device = device.name;
  key.arch = device.arch();
  key.driver_version = device.driver_version;
  key.size_bucket = rt::size_bucket(n);
  key.space = fmt::format("{}/{}", codegen::kElementwiseFamily, codegen::kElementwiseSpaceVersion);
  return key;
}

// --- Using stored answers ----------------------------------------------------------

std::string_view to_string(LaunchSource source) {
  switch (source) {
  case LaunchSource::Heuristic: return "heuristic";
  case LaunchSource::TunedEntry: return "tuned entry";
  case LaunchSource::TunedNow: return "tuned now";
  }
  return "?";
}

std::string TunedLaunch::explain() const {
  return fmt::format("{} ({}: {})", config.describe(), to_string(source), reason);
}

TunedLaunch tuned_launch(const ir::Program& optimized, uint64_t n, bool aligned) {
  rt::Runtime& runtime = rt::Runtime::get();
  rt::TuneMode mode = rt::tune_mode();
  // GPUKIT_TUNE=off reads no file at all.
  rt::TuningDatabase memory_only("");
  return tuned_launch(optimized, n, aligned, mode,
                      mode == rt::TuneMode::Off ? memory_only : rt::TuningDatabase::process(),
                      runtime.on_gpu() ? runtime.device() : nullptr, runtime.fallback_reason());
}

TunedLaunch tuned_launch(const ir::Program& optimized, uint64_t n, bool aligned, rt::TuneMode mode,
                         rt::TuningDatabase& database, const rt::DeviceInfo* device,
                         std::string_view no_gpu_reason) {
  codegen::ElementwiseProblem problem = codegen::describe_elementwise(optimized, n, aligned);
  TunedLaunch t;
  t.config = codegen::heuristic_elementwise_config(problem);
  t.limits = device ? target_limits(*device) : codegen::TargetLimits::for_arch(9, 0);
  if (mode == rt::TuneMode::Off) {
    t.reason = "GPUKIT_TUNE=off";
    return t;
  }
  if (!device) {
    t.reason = fmt::format("no GPU ({}); tuned entries are per device", no_gpu_reason);
    return t;
  }
  rt::TuningKey key = elementwise_tuning_key(optimized, n, aligned, *device);
  if (std::optional<rt::TuningRecord> stored = database.lookup(key)) {
    codegen::TuningSpace space = codegen::elementwise_space(problem, t.limits);
    codegen::TuningConfig config = config_from_record(space, stored->config);
    std::optional<codegen::ElementwiseConfig> e = codegen::ElementwiseConfig::from_config(config);
    if (e && space.contains(config) && (aligned || !e->vectorize)) {
      t.config = *e;
      t.source = LaunchSource::TunedEntry;
      t.reason = fmt::format("{}, measured at n = {}: {:.2f}x the heuristic's speed",
                             database.path().empty() ? std::string("tuning database") : database.path(),
                             stored->n, stored->best_ms > 0 ? stored->default_ms / stored->best_ms : 1.0);
      return t;
    }
    t.reason = fmt::format("the tuned entry `{}` in {} is not a point of space {}; re-run `gpukit "
                           "tune`",
                           config.to_string(), database.path(), space.id());
    return t;
  }
  if (mode == rt::TuneMode::On) {
    try {
      TuneOptions options;
      options.aligned = aligned;
      options.database = &database;
      TuneReport report = tune_program(optimized, n, options);
      t.config = *codegen::ElementwiseConfig::from_config(report.winner().config);
      t.source = LaunchSource::TunedNow;
      t.reason = fmt::format("GPUKIT_TUNE=on, no entry: measured {} candidates in {:.2f} s, {:.2f}x "
                             "the heuristic's speed; stored in {}",
                             std::count_if(report.candidates.begin(), report.candidates.end(),
                                           [](const TuneCandidate& c) { return c.measured; }),
                             report.wall_s, report.speedup(), report.database);
    } catch (const Error& e) {
      t.reason = fmt::format("GPUKIT_TUNE=on, but tuning failed: {}", e.what());
    }
    return t;
  }
  t.reason = fmt::format("no tuned entry for this kernel at n in [2^{}, 2^{}) on {}; run `gpukit "
                         "tune` or set GPUKIT_TUNE=on",
                         key.size_bucket, key.size_bucket + 1, key.device);
  return t;
}

uint8_t variant_size_bucket(uint64_t n) {
  static const bool answers_may_apply = [] {
    rt::TuneMode mode = rt::tune_mode();
    if (mode == rt::TuneMode::Off || !rt::Runtime::get().on_gpu())
      return false;
    // Under `cached`, an empty database cannot change any launch: one
    // variant serves every size, as before tuning existed. Under `on`, the
    // first use of each bucket may tune.
    return mode == rt::TuneMode::On || !rt::TuningDatabase::process().records().empty();
  }();
  return answers_may_apply ? static_cast<uint8_t>(1 + rt::size_bucket(n)) : 0;
}

} // namespace gpukit
