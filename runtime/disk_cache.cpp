#include "runtime/disk_cache.hpp"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Chrono.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gpukit::rt {

namespace {

constexpr char Magic[8] = {'G', 'P', 'U', 'K', 'I', 'T', 'K', 'C'};
/// Bump when the layout changes; older files then read as Corrupt and are replaced.
constexpr uint32_t FormatVersion = 1;
constexpr size_t HeaderBytes = 40;
constexpr llvm::StringLiteral EntrySuffix = ".cubin";
constexpr llvm::StringLiteral TempMarker = ".tmp-";

struct Header {
  uint32_t Version = 0;
  uint32_t Size = 0;
  uint64_t Key = 0;
  uint64_t PayloadBytes = 0;
  uint64_t PayloadHash = 0;
};

uint64_t payload_hash(llvm::StringRef payload) { return llvm::xxHash64(payload); }

void encode_header(char* out, const Header& header) {
  namespace endian = llvm::support::endian;
  std::memcpy(out, Magic, sizeof(Magic));
  endian::write32le(out + 8, header.Version);
  endian::write32le(out + 12, header.Size);
  endian::write64le(out + 16, header.Key);
  endian::write64le(out + 24, header.PayloadBytes);
  endian::write64le(out + 32, header.PayloadHash);
}

/// The payload of a well-formed entry for `key` (any key when `key` is
/// nullptr), or false when any check fails.
bool decode_entry(llvm::StringRef file, const uint64_t* key, llvm::StringRef& payload) {
  namespace endian = llvm::support::endian;
  if (file.size() < HeaderBytes || std::memcmp(file.data(), Magic, sizeof(Magic)) != 0)
    return false;
  const char* p = file.data();
  Header header;
  header.Version = endian::read32le(p + 8);
  header.Size = endian::read32le(p + 12);
  header.Key = endian::read64le(p + 16);
  header.PayloadBytes = endian::read64le(p + 24);
  header.PayloadHash = endian::read64le(p + 32);
  if (header.Version != FormatVersion || header.Size != HeaderBytes)
    return false;
  if (key && header.Key != *key)
    return false;
  if (header.PayloadBytes != file.size() - HeaderBytes)
    return false;
  payload = file.drop_front(HeaderBytes);
  return payload_hash(payload) == header.PayloadHash;
}

/// The key named by an entry's file name, or false for any other file.
bool parse_entry_name(llvm::StringRef name, uint64_t& key) {
  if (!name.consume_back(EntrySuffix) || name.size() != 16)
    return false;
  return !name.getAsInteger(16, key);
}

bool variable_is_off(const char* value) {
  if (!value)
    return false;
  llvm::StringRef v(value);
  return v.equals_insensitive("off") || v == "0" || v.equals_insensitive("false") ||
         v.equals_insensitive("no");
}

} // namespace

std::string cache_directory() {
  if (const char* dir = std::getenv("GPUKIT_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fmt::format("{}/gpukit", xdg);
  if (const char* home = std::getenv("HOME"); home && *home)
    return fmt::format("{}/.cache/gpukit", home);
  return {};
}

bool disk_cache_enabled() { return !variable_is_off(std::getenv("GPUKIT_CACHE")); }

std::string DiskCache::entry_path(uint64_t key) const {
  return fmt::format("{}/{:016x}{}", Directory, key, EntrySuffix.str());
}

DiskCache::Lookup DiskCache::read(uint64_t key, std::vector<char>& payload) const {
  std::string path = entry_path(key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return Lookup::Missing; // absent, or unreadable: either way, compile
  llvm::StringRef contents;
  if (!decode_entry((*file)->getBuffer(), &key, contents)) {
    // Removing races harmlessly with a writer that has just replaced the
    // file: the good entry is lost and written again by the next compile.
    llvm::sys::fs::remove(path);
    return Lookup::Corrupt;
  }
  payload.assign(contents.begin(), contents.end());
  return Lookup::Hit;
}

bool DiskCache::write(uint64_t key, const std::vector<char>& payload, std::string* error) const {
  auto fail = [&](const std::string& what, std::error_code ec) {
    if (error)
      *error = fmt::format("{}: {}", what, ec.message());
    return false;
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(Directory))
    return fail(fmt::format("cannot create the kernel cache directory {}", Directory), ec);

  std::string path = entry_path(key);
  int fd = -1;
  llvm::SmallString<256> temp;
  // Same directory as the entry, so the rename cannot cross filesystems.
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + TempMarker.str() + "%%%%%%%%%%%%", fd, temp))
    return fail(fmt::format("cannot create a file in the kernel cache directory {}", Directory), ec);

  char header[HeaderBytes];
  llvm::StringRef body(payload.data(), payload.size());
  encode_header(header, Header{FormatVersion, HeaderBytes, key, payload.size(), payload_hash(body)});
  std::error_code write_error;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(header, HeaderBytes);
    out << body;
    out.close();
    write_error = out.error();
    out.clear_error(); // reported below instead of aborting in the destructor
  }
  if (write_error) {
    llvm::sys::fs::remove(temp);
    return fail(fmt::format("cannot write {}", temp.str().str()), write_error);
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return fail(fmt::format("cannot rename {} to {}", temp.str().str(), path), ec);
  }
  return true;
}

std::vector<CacheEntryInfo> DiskCache::list() const {
  std::vector<CacheEntryInfo> entries;
  if (Directory.empty())
    return entries;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(Directory, ec), end; it != end && !ec; it.increment(ec)) {
    uint64_t key = 0;
    if (!parse_entry_name(llvm::sys::path::filename(it->path()), key))
      continue;
    CacheEntryInfo info;
    info.path = it->path();
    info.key = key;
    llvm::ErrorOr<llvm::sys::fs::basic_file_status> status = it->status();
    if (status) {
      info.file_bytes = status->getSize();
      info.modified_seconds = llvm::sys::toTimeT(status->getLastModificationTime());
    }
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(info.path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    llvm::StringRef payload;
    if (file && decode_entry((*file)->getBuffer(), &key, payload)) {
      info.valid = true;
      info.payload_bytes = payload.size();
    }
    entries.push_back(std::move(info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.key < b.key; });
  return entries;
}

uint64_t DiskCache::bytes() const {
  uint64_t total = 0;
  for (const CacheEntryInfo& entry : list())
    total += entry.file_bytes;
  return total;
}

size_t DiskCache::clear() const {
  if (Directory.empty())
    return 0;
  std::vector<std::string> doomed;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(Directory, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    uint64_t key = 0;
    // Only our own files: the directory may be shared with something else.
    size_t marker = name.find(TempMarker);
    bool temp = marker != llvm::StringRef::npos && parse_entry_name(name.take_front(marker), key);
    if (temp || parse_entry_name(name, key))
      doomed.push_back(it->path());
  }
  size_t removed = 0;
  for (const std::string& path : doomed)
    if (!llvm::sys::fs::remove(path))
      ++removed;
  return removed;
}

std::vector<CacheEntryInfo> list_disk_entries() { return DiskCache(cache_directory()).list(); }
uint64_t disk_bytes() { return DiskCache(cache_directory()).bytes(); }
size_t clear_disk() { return DiskCache(cache_directory()).clear(); }

} // namespace gpukit::rt
