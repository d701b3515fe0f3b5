// gpukit info and gpukit cache: what the runtime found, and the on-disk
// kernel cache.
#include "tools/cli.hpp"

#include "runtime/disk_cache.hpp"
#include "runtime/runtime_info.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/raw_ostream.h>

#include <ctime>

namespace gpukit::cli {

namespace {

std::string format_bytes(uint64_t b) {
  if (b < 1024)
    return fmt::format("{} B", b);
  if (b < 1024 * 1024)
    return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0));
}

std::string format_time(int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

} // namespace

int run_info() {
  llvm::outs() << rt::describe_runtime();
  return 0;
}

int run_cache() {
  llvm::raw_ostream& os = llvm::outs();
  std::string dir = rt::cache_directory();
  if (dir.empty())
    throw Error(ErrorKind::Usage, "no kernel cache directory: set GPUKIT_CACHE_DIR (or HOME)");
  if (CacheAction == "list") {
    std::vector<rt::CacheEntryInfo> entries = rt::list_disk_entries();
    for (const rt::CacheEntryInfo& e : entries)
      os << fmt::format("{:016x}  {:>10}  {}{}\n", e.key, format_bytes(e.file_bytes),
                        format_time(e.modified_seconds), e.valid ? "" : "  (corrupt)");
    os << fmt::format("{} entr{} in {}\n", entries.size(), entries.size() == 1 ? "y" : "ies", dir);
    return 0;
  }
  if (CacheAction == "stats") {
    std::vector<rt::CacheEntryInfo> entries = rt::list_disk_entries();
    size_t corrupt = 0;
    for (const rt::CacheEntryInfo& e : entries)
      corrupt += !e.valid;
    os << fmt::format("directory: {}{}\n", dir, rt::disk_cache_enabled() ? "" : " (disabled by GPUKIT_CACHE)");
    os << fmt::format("entries:   {}{}\n", entries.size(),
                      corrupt ? fmt::format(" ({} corrupt)", corrupt) : std::string());
    os << fmt::format("size:      {}\n", format_bytes(rt::disk_bytes()));
    return 0;
  }
  if (CacheAction == "clear") {
    size_t removed = rt::clear_disk();
    os << fmt::format("removed {} file{} from {}\n", removed, removed == 1 ? "" : "s", dir);
    return 0;
  }
  throw Error(ErrorKind::Usage,
              fmt::format("unknown cache action '{}': use list, stats or clear", CacheAction.getValue()));
}

} // namespace gpukit::cli
