// DiskCache: compiled kernels on disk, one file per cache key, shared safely
// by concurrent processes.
//
//   DiskCache disk(cache_directory());
//   std::vector<char> cubin;
//   if (disk.read(key, cubin) != DiskCache::Lookup::Hit) { /* compile */ disk.write(key, cubin); }
//
// An entry is <16 hex digits of the key>.cubin: a 40-byte header (magic
// "GPUKITKC", format version, header size, key, payload size, xxHash64 of the
// payload; little-endian) followed by the payload. Writers create a unique
// temporary file in the same directory and rename() it over the entry, so a
// reader sees either nothing or a complete file; a file that fails any
// check (a crash mid-write on a filesystem without ordered renames, a disk
// error, a hand edit) is reported as Corrupt and removed. There is no size
// limit or eviction: `gpukit cache clear` empties the directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpukit::rt {

/// The on-disk cache directory, whether or not the disk cache is enabled:
/// $GPUKIT_CACHE_DIR, else $XDG_CACHE_HOME/gpukit, else $HOME/.cache/gpukit;
/// empty when none of these variables is set.
std::string cache_directory();
/// False when GPUKIT_CACHE is "off" (or "0", "false", "no").
bool disk_cache_enabled();

/// One file of the disk cache, for `gpukit cache list`.
struct CacheEntryInfo {
  std::string path;
  uint64_t key = 0;
  uint64_t file_bytes = 0;
  uint64_t payload_bytes = 0;
  int64_t modified_seconds = 0; ///< since the Unix epoch
  bool valid = false;           ///< the header and the checksum check out
};

class DiskCache {
public:
  /// `directory` is created on the first write.
  explicit DiskCache(std::string directory) : Directory(std::move(directory)) {}

  const std::string& directory() const { return Directory; }
  /// <directory>/<16 hex digits>.cubin
  std::string entry_path(uint64_t key) const;

  enum class Lookup { Missing, Hit, Corrupt };
  /// Reads the entry for `key` into `payload`. A Corrupt entry has been removed.
  Lookup read(uint64_t key, std::vector<char>& payload) const;
  /// Stores `payload` under `key` atomically. Returns false with the reason
  /// in `error` when the directory or file cannot be written.
  bool write(uint64_t key, const std::vector<char>& payload, std::string* error = nullptr) const;

  /// Every entry, sorted by key (temporary files of writers are skipped).
  std::vector<CacheEntryInfo> list() const;
  /// Total size of the entries' files.
  uint64_t bytes() const;
  /// Removes every entry and leftover temporary file; returns how many files.
  size_t clear() const;

private:
  std::string Directory;
};

/// The cache_directory()'s entries, total size, and removal, for the CLI.
std::vector<CacheEntryInfo> list_disk_entries();
uint64_t disk_bytes();
size_t clear_disk();

} // namespace gpukit::rt
