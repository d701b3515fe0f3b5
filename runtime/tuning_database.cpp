#include "runtime/tuning_database.hpp"

#include "runtime/disk_cache.hpp"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Errc.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

namespace gpukit::rt {

namespace {

constexpr llvm::StringLiteral kFormatName = "gpukit-tuning";
/// How long a writer waits for another process's lock before giving up.
constexpr std::chrono::milliseconds kLockTimeout{10000};

} // namespace

// --- Modes and keys -----------------------------------------------------------

std::optional<TuneMode> parse_tune_mode(std::string_view text) {
  std::string lower = llvm::StringRef(text.data(), text.size()).trim().lower();
  if (lower == "off" || lower == "0" || lower == "false" || lower == "no")
    return TuneMode::Off;
  if (lower == "cached" || lower.empty())
    return TuneMode::Cached;
  if (lower == "on" || lower == "1" || lower == "true" || lower == "yes")
    return TuneMode::On;
  return std::nullopt;
}

TuneMode tune_mode() {
  static const TuneMode mode = [] {
    const char* value = std::getenv("GPUKIT_TUNE");
    if (!value)
      return TuneMode::Cached;
    if (std::optional<TuneMode> m = parse_tune_mode(value))
      return *m;
    llvm::errs() << fmt::format("gpukit: warning: GPUKIT_TUNE={} is not one of off, cached, on; "
                                "using cached\n",
                                value);
    return TuneMode::Cached;
  }();
  return mode;
}

std::string_view to_string(TuneMode mode) {
  switch (mode) {
  case TuneMode::Off: return "off";
  case TuneMode::Cached: return "cached";
  case TuneMode::On: return "on";
  }
  return "?";
}

unsigned size_bucket(uint64_t n) { return n <= 1 ? 0 : 63 - static_cast<unsigned>(__builtin_clzll(n)); }

std::string TuningKey::canonical() const {
  // Unit separators: no field of a key holds one.
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", kernel, dtype, device, arch,
                     driver_version, size_bucket, space);
}

std::string TuningKey::describe() const {
  return fmt::format("{} {} on {} ({}, driver {}), n in [2^{}, 2^{}), space {}", kernel, dtype,
                     device, arch, driver_version, size_bucket, size_bucket + 1, space);
}

// --- The file format ------------------------------------------------------------

namespace {

/// What reading the file found.
struct FileContents {
  enum class Status { Missing, Valid, Unreadable, Corrupt, OtherVersion };
  Status status = Status::Missing;
  int version = 0;          ///< OtherVersion: the file's
  std::string problem;      ///< Unreadable, Corrupt: why
  unsigned bad_entries = 0; ///< entries skipped in a Valid file
  std::map<std::string, TuningRecord> records;
};

std::optional<TuningRecord> parse_record(const llvm::json::Value& value) {
  const llvm::json::Object* o = value.getAsObject();
  if (!o)
    return std::nullopt;
  TuningRecord r;
  auto text = [&](llvm::StringRef name, std::string& out) {
    llvm::Optional<llvm::StringRef> s = o->getString(name);
    if (!s)
      return false;
    out = s->str();
    return true;
  };
  auto integer = [&](llvm::StringRef name, auto& out) {
    llvm::Optional<int64_t> i = o->getInteger(name);
    if (!i || *i < 0)
      return false;
    out = static_cast<std::remove_reference_t<decltype(out)>>(*i);
    return true;
  };
  auto number = [&](llvm::StringRef name, double& out) {
    llvm::Optional<double> d = o->getNumber(name);
    if (!d)
      return false;
    out = *d;
    return true;
  };
  if (!text("kernel", r.key.kernel) || !text("dtype", r.key.dtype) ||
      !text("device", r.key.device) || !text("arch", r.key.arch) ||
      !integer("driver", r.key.driver_version) || !integer("bucket", r.key.size_bucket) ||
      !text("space", r.key.space) || !integer("n", r.n) || !number("best_ms", r.best_ms) ||
      !number("default_ms", r.default_ms) || !integer("candidates", r.candidates) ||
      !integer("tuned_at", r.tuned_at))
    return std::nullopt;
  text("label", r.label); // optional
  const llvm::json::Object* config = o->getObject("config");
  if (!config || config->empty())
    return std::nullopt;
  for (const auto& [name, v] : *config) {
    llvm::Optional<int64_t> i = v.getAsInteger();
    if (!i)
      return std::nullopt;
    r.config[name.str()] = *i;
  }
  return r;
}

FileContents parse_file(llvm::StringRef text) {
  FileContents c;
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  if (!root) {
    c.status = FileContents::Status::Corrupt;
    c.problem = fmt::format("it is not valid JSON ({})", llvm::toString(root.takeError()));
    return c;
  }
  const llvm::json::Object* o = root->getAsObject();
  if (!o || o->getString("format") != llvm::Optional<llvm::StringRef>(kFormatName)) {
    c.status = FileContents::Status::Corrupt;
    c.problem = fmt::format("it is not a GPUkit tuning database (no \"format\": \"{}\")",
                            kFormatName.str());
    return c;
  }
  llvm::Optional<int64_t> version = o->getInteger("version");
  if (!version) {
    c.status = FileContents::Status::Corrupt;
    c.problem = "it has no integer \"version\"";
    return c;
  }
  if (*version != kTuningDatabaseVersion) {
    c.status = FileContents::Status::OtherVersion;
    c.version = static_cast<int>(*version);
    return c;
  }
  const llvm::json::Array* entries = o->getArray("entries");
  if (!entries) {
    c.status = FileContents::Status::Corrupt;
    c.problem = "it has no \"entries\" array";
    return c;
  }
  c.status = FileContents::Status::Valid;
  for (const llvm::json::Value& e : *entries) {
    std::optional<TuningRecord> r = parse_record(e);
    if (!r) {
      ++c.bad_entries;
      continue;
    }
    std::string key = r->key.canonical();
    c.records[key] = std::move(*r);
  }
  return c;
}

FileContents read_file(const std::string& path) {
  FileContents c;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    if (buffer.getError() == llvm::errc::no_such_file_or_directory)
      return c; // Missing: an empty database
    c.status = FileContents::Status::Unreadable;
    c.problem = fmt::format("it cannot be read ({})", buffer.getError().message());
    return c;
  }
  return parse_file((*buffer)->getBuffer());
}

void write_json(llvm::raw_ostream& os, const std::map<std::string, TuningRecord>& records) {
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", kFormatName);
    j.attribute("version", kTuningDatabaseVersion);
    j.attributeArray("entries", [&] {
      for (const auto& [canonical, r] : records) {
        j.object([&] {
          j.attribute("kernel", r.key.kernel);
          j.attribute("dtype", r.key.dtype);
          j.attribute("device", r.key.device);
          j.attribute("arch", r.key.arch);
          j.attribute("driver", r.key.driver_version);
          j.attribute("bucket", static_cast<int64_t>(r.key.size_bucket));
          j.attribute("space", r.key.space);
          j.attributeObject("config", [&] {
            for (const auto& [name, value] : r.config)
              j.attribute(name, value);
          });
          j.attribute("n", static_cast<int64_t>(r.n));
          j.attribute("best_ms", r.best_ms);
          j.attribute("default_ms", r.default_ms);
          j.attribute("candidates", static_cast<int64_t>(r.candidates));
          j.attribute("tuned_at", r.tuned_at);
          j.attribute("label", r.label);
        });
      }
    });
  });
  os << "\n";
}

/// The lock file that serialises writers of `path`, held while alive.
class WriterLock {
public:
  explicit WriterLock(const std::string& path) : Path(path + ".lock") {
    std::error_code ec = llvm::sys::fs::openFileForReadWrite(Path, Fd, llvm::sys::fs::CD_OpenAlways,
                                                             llvm::sys::fs::OF_None);
    if (ec) {
      Problem = fmt::format("cannot open the lock file {} ({})", Path, ec.message());
      Fd = -1;
      return;
    }
    ec = llvm::sys::fs::tryLockFile(Fd, kLockTimeout);
    if (ec)
      Problem = fmt::format("cannot lock {} within {} s ({}); another process may be stuck "
                            "holding it",
                            Path, kLockTimeout.count() / 1000, ec.message());
    else
      Locked = true;
  }
  ~WriterLock() {
    if (Locked)
      (void)llvm::sys::fs::unlockFile(Fd);
    if (Fd >= 0)
      (void)llvm::sys::Process::SafelyCloseFileDescriptor(Fd);
  }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  bool locked() const { return Locked; }
  const std::string& problem() const { return Problem; }

private:
  std::string Path;
  int Fd = -1;
  bool Locked = false;
  std::string Problem;
};

} // namespace

// --- The database -------------------------------------------------------------

struct TuningDatabase::Impl {
  std::string Path;
  llvm::raw_ostream* WarningsTo = nullptr;
  /// Guards everything below; also serialises this process's writers (the
  /// lock file excludes other processes, not other threads).
  mutable std::mutex Mutex;
  bool Loaded = false;
  std::map<std::string, TuningRecord> Records;
  std::vector<std::string> Warnings;

  void warn(std::string message) {
    if (llvm::is_contained(Warnings, message))
      return;
    if (WarningsTo)
      *WarningsTo << "gpukit: warning: " << message << "\n";
    Warnings.push_back(std::move(message));
  }

  /// A warning for a file this process cannot use, saying what happens next.
  void warn_unusable(const FileContents& c, llvm::StringRef consequence) {
    switch (c.status) {
    case FileContents::Status::Missing:
    case FileContents::Status::Valid: return;
    case FileContents::Status::Unreadable:
    case FileContents::Status::Corrupt:
      warn(fmt::format("ignoring the tuning database {}: {}; {}", Path, c.problem, consequence.str()));
      return;
    case FileContents::Status::OtherVersion:
      warn(fmt::format("ignoring the tuning database {}: it has format version {}, this GPUkit "
                       "reads version {}; {}",
                       Path, c.version, kTuningDatabaseVersion, consequence.str()));
      return;
    }
  }

  void load() {
    if (Loaded)
      return;
    Loaded = true;
    if (Path.empty())
      return;
    FileContents c = read_file(Path);
    warn_unusable(c, "the heuristic launch configurations are used (re-run `gpukit tune`, "
                     "or delete the file)");
    if (c.bad_entries)
      warn(fmt::format("ignoring {} malformed entr{} of the tuning database {}", c.bad_entries,
                       c.bad_entries == 1 ? "y" : "ies", Path));
    if (c.status == FileContents::Status::Valid)
      Records = std::move(c.records);
  }

  /// Merges `record` into the file under the lock; returns the problem, or "".
  std::string write_through(const TuningRecord& record) {
    llvm::StringRef directory = llvm::sys::path::parent_path(Path);
    if (!directory.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(directory))
        return fmt::format("cannot create {} ({})", directory.str(), ec.message());
    WriterLock lock(Path);
    if (!lock.locked())
      return lock.problem();

    FileContents c = read_file(Path);
    if (c.status == FileContents::Status::OtherVersion && c.version > kTuningDatabaseVersion)
      return fmt::format("{} was written by a newer GPUkit (format version {}, this one writes "
                         "{}); it is left as it is",
                         Path, c.version, kTuningDatabaseVersion);
    warn_unusable(c, "it is replaced by a new file");
    std::map<std::string, TuningRecord> merged;
    if (c.status == FileContents::Status::Valid)
      merged = std::move(c.records);
    merged[record.key.canonical()] = record;

    llvm::SmallString<256> temp;
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(Path + ".tmp-%%%%%%%%", fd, temp))
      return fmt::format("cannot create a temporary file beside {} ({})", Path, ec.message());
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      write_json(os, merged);
      os.close();
      if (os.has_error()) {
        std::string problem = fmt::format("cannot write {} ({})", temp.str().str(), os.error().message());
        os.clear_error();
        llvm::sys::fs::remove(temp);
        return problem;
      }
    }
    if (std::error_code ec = llvm::sys::fs::rename(temp, Path)) {
      llvm::sys::fs::remove(temp);
      return fmt::format("cannot rename {} to {} ({})", temp.str().str(), Path, ec.message());
    }
    // What this process knows now includes every other writer's entries.
    Records = std::move(merged);
    Loaded = true;
    return "";
  }
};

TuningDatabase::TuningDatabase(std::string path, llvm::raw_ostream* warnings_to)
    : P(std::make_unique<Impl>()) {
  P->Path = std::move(path);
  P->WarningsTo = warnings_to;
}

TuningDatabase::~TuningDatabase() = default;

TuningDatabase& TuningDatabase::process() {
  // Never destroyed: lookups from static destructors keep working.
  static TuningDatabase* db = new TuningDatabase(default_path(), &llvm::errs());
  return *db;
}

std::string TuningDatabase::default_path() {
  std::string directory = cache_directory();
  if (directory.empty())
    return "";
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, "tuning.json");
  return std::string(path.str());
}

const std::string& TuningDatabase::path() const { return P->Path; }

std::optional<TuningRecord> TuningDatabase::lookup(const TuningKey& key) {
  std::lock_guard<std::mutex> guard(P->Mutex);
  P->load();
  auto it = P->Records.find(key.canonical());
  if (it == P->Records.end())
    return std::nullopt;
  return it->second;
}

bool TuningDatabase::store(const TuningRecord& record, std::string* error) {
  std::lock_guard<std::mutex> guard(P->Mutex);
  P->load();
  if (P->Path.empty()) {
    P->Records[record.key.canonical()] = record;
    return true;
  }
  std::string problem = P->write_through(record);
  if (problem.empty())
    return true;
  P->Records[record.key.canonical()] = record;
  if (error)
    *error = problem;
  return false;
}

std::vector<TuningRecord> TuningDatabase::records() {
  std::lock_guard<std::mutex> guard(P->Mutex);
  P->load();
  std::vector<TuningRecord> out;
  out.reserve(P->Records.size());
  for (const auto& [canonical, r] : P->Records)
    out.push_back(r);
  return out;
}

void TuningDatabase::reload() {
  std::lock_guard<std::mutex> guard(P->Mutex);
  P->Loaded = false;
  P->Records.clear();
}

std::vector<std::string> TuningDatabase::warnings() const {
  std::lock_guard<std::mutex> guard(P->Mutex);
  return P->Warnings;
}

} // namespace gpukit::rt
