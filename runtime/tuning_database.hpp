// TuningDatabase: the autotuner's answers on disk, so a later process uses a
// measured launch configuration without timing anything.
//
//   TuningDatabase& db = TuningDatabase::process();     // <cache dir>/tuning.json
//   if (std::optional<TuningRecord> r = db.lookup(key)) use(r->config);
//   else db.store({key, config, ...});                  // after measuring
//
// The runtime knows nothing of the IR: a key is opaque strings and numbers
// the caller derives (the kernel's structural hash, its dtype, the device's
// name, SM and driver version, a power-of-two size bucket, and the version
// of the search space the answer was drawn from); a configuration is named
// integers the caller interprets. Only an exact match on every field is an
// answer, so another device, another bucket or a stale search space falls
// back to the caller's heuristic.
//
// The file is JSON (llvm::json) with a format version. A file that does not
// parse, or has another version, is ignored with one warning (lookups miss;
// a store replaces an older or corrupt file, but never a newer one). Writers
// take an exclusive lock on <file>.lock, re-read the file, merge their entry
// and rename a unique temporary file over it, so concurrent processes lose
// no entries and readers, which take no lock, see either the old or the new
// file. It is not a cache of compiled code: `gpukit cache clear` leaves it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace gpukit::rt {

/// GPUKIT_TUNE: off (the heuristic, the database is not read), cached (the
/// default: a stored answer, else the heuristic) or on (a stored answer, else
/// tune on first use and store the answer).
enum class TuneMode { Off, Cached, On };

/// The mode GPUKIT_TUNE selects, read once per process. An unknown value
/// gives Cached and one warning on stderr.
TuneMode tune_mode();
/// Parses a GPUKIT_TUNE value ("off", "cached", "on", case-insensitive;
/// "0"/"1" for off/on); nullopt for anything else.
std::optional<TuneMode> parse_tune_mode(std::string_view text);
std::string_view to_string(TuneMode mode);

/// The power-of-two size bucket of `n` elements: floor(log2(n)), 0 for n <= 1.
/// Sizes 2^k .. 2^(k+1)-1 share an answer.
unsigned size_bucket(uint64_t n);

/// What a stored answer is for. Every field must match for a lookup to hit.
struct TuningKey {
  std::string kernel;      ///< the kernel's identity, e.g. "ew/<structural hash>/aligned"
  std::string dtype;       ///< "f32", or "f32,i32" for several outputs
  std::string device;      ///< the device's name, "NVIDIA H100 80GB HBM3"
  std::string arch;        ///< "sm_90"
  int driver_version = 0;  ///< 13000 for CUDA 13.0
  unsigned size_bucket = 0;
  std::string space;       ///< the search space and its version, "elementwise/1"

  /// The fields joined in a fixed order: the database's index.
  std::string canonical() const;
  /// "ew/... f32 on NVIDIA H100 (sm_90, driver 13000), n in [2^24, 2^25), space elementwise/1"
  std::string describe() const;
  bool operator==(const TuningKey&) const = default;
};

/// One stored answer.
struct TuningRecord {
  TuningKey key;
  /// The winning configuration: named integers, in the name order (the
  /// caller gives them meaning).
  std::map<std::string, int64_t> config;
  uint64_t n = 0;          ///< the size it was measured at
  double best_ms = 0;      ///< the winner's median time
  double default_ms = 0;   ///< the heuristic configuration's median time
  unsigned candidates = 0; ///< configurations measured
  int64_t tuned_at = 0;    ///< seconds since the Unix epoch
  std::string label;       ///< the kernel's source text, for people reading the file
};

/// The database's file format version. Bump it when a field changes
/// meaning; files of another version are then ignored, not misread.
inline constexpr int kTuningDatabaseVersion = 1;

class TuningDatabase {
public:
  /// A database kept in `path` (read on first use). An empty path keeps
  /// records in memory only. Warnings go to `warnings_to` (nullptr: kept
  /// in warnings() only).
  explicit TuningDatabase(std::string path, llvm::raw_ostream* warnings_to = nullptr);
  ~TuningDatabase();
  TuningDatabase(const TuningDatabase&) = delete;
  TuningDatabase& operator=(const TuningDatabase&) = delete;

  /// The process's database: default_path(), warnings on stderr.
  static TuningDatabase& process();
  /// <cache_directory()>/tuning.json; empty when no cache directory is known.
  static std::string default_path();

  const std::string& path() const;

  /// The stored answer for `key`, or nullopt. Reads the file once (later
  /// calls look up in memory); a missing file is an empty database.
  std::optional<TuningRecord> lookup(const TuningKey& key);

  /// Adds or replaces the answer for `record.key`: under the lock, re-reads
  /// the file, merges and writes it atomically. Returns false with the reason
  /// in `error` when the file cannot be written (the record is still kept in
  /// memory for this process).
  bool store(const TuningRecord& record, std::string* error = nullptr);

  /// Every record, sorted by key (reads the file on first use).
  std::vector<TuningRecord> records();
  /// Forgets what was read; the next lookup reads the file again.
  void reload();

  /// Warnings so far ("ignoring ... : not valid JSON ..."), oldest first.
  std::vector<std::string> warnings() const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace gpukit::rt
