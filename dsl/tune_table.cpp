// format_tune_table (dsl/tune.hpp): the table `gpukit tune` prints.
#include "dsl/tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpukit {

namespace {

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (1ull << 30))
    return fmt::format("{:.2f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20))
    return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10))
    return fmt::format("{:.1f} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

} // namespace

std::string format_tune_table(const TuneReport& r) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  const TuneCandidate* best = nullptr;
  for (const TuneCandidate& c : r.candidates)
    if (c.measured && (!best || c.median_ms < best->median_ms))
      best = &c;

  line(fmt::format("tuning {} for n = {} on {}", r.kernel, r.n, r.device));
  if (!r.label.empty())
    line("  " + r.label);
  size_t measured = std::count_if(r.candidates.begin(), r.candidates.end(),
                                  [](const TuneCandidate& c) { return c.measured; });
  line(fmt::format("  {} per launch; {} rotating buffer set{} ({})", bytes_text(r.bytes_per_launch),
                   r.buffer_sets, r.buffer_sets == 1 ? "" : "s", bytes_text(r.buffer_bytes)));
  line(fmt::format("  {} configurations: {} pruned before compiling, {} kept; {} kernels compiled "
                   "in {:.2f} s; {} measured in {:.2f} s; {:.2f} s in all",
                   r.space_size, r.pruned.size(), r.candidates.size(), r.kernels_compiled,
                   r.compile_s, measured, r.measure_s, r.wall_s));
  line("");

  size_t width = 6;
  for (const TuneCandidate& c : r.candidates)
    if (c.measured || c.is_default || !c.problem.starts_with("not measured"))
      width = std::max(width, c.description.size());
  line(fmt::format("  {:<{}}  {:>10}  {:>9}  {:>9}", "config", width, "time (ms)", "GB/s", "% of best"));
  std::map<std::string, size_t> unmeasured; // reason -> count
  for (const TuneCandidate& c : r.candidates) {
    std::string marks;
    if (c.is_winner)
      marks += "  <- winner";
    if (c.is_default)
      marks += "  <- default";
    if (c.measured) {
      if (c.stopped_early)
        marks += fmt::format("  (stopped early after {})", c.repetitions);
      double percent = best ? 100.0 * best->median_ms / c.median_ms : 0;
      line(fmt::format("  {:<{}}  {:>10.4f}  {:>9.1f}  {:>8.1f}%{}", c.description, width,
                       c.median_ms, c.gbs, percent, marks));
    } else if (c.problem.starts_with("not measured") && !c.is_default) {
      ++unmeasured[c.problem];
    } else {
      line(fmt::format("  {:<{}}  {:>10}  {:>9}  {:>9}{}  {}", c.description, width, "-", "-", "-",
                       marks, c.problem));
    }
  }
  for (const auto& [reason, count] : unmeasured)
    line(fmt::format("  ({} more {})", count, reason));

  if (!r.pruned.empty()) {
    std::map<std::string, size_t> by_constraint;
    std::map<std::string, const TunePruned*> example;
    for (const TunePruned& p : r.pruned) {
      ++by_constraint[p.constraint];
      example.emplace(p.constraint, &p);
    }
    std::string counts;
    for (const auto& [constraint, count] : by_constraint)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", constraint, count);
    line("");
    line(fmt::format("  pruned: {}", counts));
    for (const auto& [constraint, p] : example)
      line(fmt::format("    e.g. {}: {}", p->description, p->reason));
  }
  for (const std::string& note : r.notes)
    line("  note: " + note);

  line("");
  const TuneCandidate& w = r.winner();
  if (w.is_default)
    line(fmt::format("  winner: the default ({})", w.description));
  else
    line(fmt::format("  winner: {}, {:.2f}x the default's speed ({:.4f} ms instead of {:.4f} ms)",
                     w.description, r.speedup(),
                     r.confirm_winner_ms > 0 ? r.confirm_winner_ms : w.median_ms,
                     r.confirm_default_ms > 0 ? r.confirm_default_ms
                                              : r.default_candidate().median_ms));
  if (r.stored)
    line(fmt::format("  stored in {} for n in [2^{}, 2^{})", r.database, r.key.size_bucket,
                     r.key.size_bucket + 1));
  else if (!r.database.empty())
    line(fmt::format("  not stored: {}", r.database));
  return out;
}

} // namespace gpukit
