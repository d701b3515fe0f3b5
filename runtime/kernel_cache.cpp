#include "runtime/kernel_cache.hpp"

#include "runtime/disk_cache.hpp"
#include "runtime/driver_api.hpp"
#include "runtime/driver_handles.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <mutex>
#include <unordered_map>

namespace gpukit::rt {

namespace {

/// Part of every key: bump it when anything that shapes a CUBIN but is not
/// in the key changes (the compiler's fixed options are in it already).
constexpr llvm::StringLiteral KeyTag = "gpukit-kernel-cache-v1";

void append_field(llvm::SmallVectorImpl<char>& out, std::string_view field) {
  // Length-prefixed, so ("ab","c") and ("a","bc") differ.
  char length[8];
  llvm::support::endian::write64le(length, field.size());
  out.append(length, length + 8);
  out.append(field.begin(), field.end());
}

/// Warns once per process that kernels are not being saved, unless GPUKIT_QUIET=1.
void warn_disk_write_failed(const std::string& why) {
  static std::atomic<bool> Warned{false};
  if (Warned.exchange(true))
    return;
  if (const char* quiet = std::getenv("GPUKIT_QUIET"); quiet && std::string_view(quiet) == "1")
    return;
  llvm::errs() << "gpukit: compiled kernels are not saved to disk: " << why
               << " (set GPUKIT_CACHE_DIR to a writable directory, or GPUKIT_CACHE=off)\n";
}

} // namespace

uint64_t kernel_cache_key(std::string_view name, std::string_view source,
                          const std::vector<std::string>& full_options, int nvrtc_major,
                          int nvrtc_minor) {
  llvm::SmallString<4096> bytes;
  append_field(bytes, KeyTag);
  append_field(bytes, fmt::format("nvrtc {}.{}", nvrtc_major, nvrtc_minor));
  append_field(bytes, name);
  append_field(bytes, source);
  append_field(bytes, fmt::format("{} options", full_options.size()));
  for (const std::string& option : full_options) // in order: order is meaningful to NVRTC
    append_field(bytes, option);
  return llvm::xxHash64(bytes.str());
}

/// One key's kernel. Its own mutex lets different kernels compile in
/// parallel while two requests for the same one compile it once.
struct KernelSlot {
  std::mutex Mutex;
  std::unique_ptr<Kernel> Compiled;
  Module Loaded;
};

struct KernelCache::Impl {
  const NvrtcApi* Nvrtc = nullptr;
  const DriverApi* Driver = nullptr;
  std::string Arch;
  CUcontext Context = nullptr;
  std::string Directory;
  std::optional<DiskCache> Disk;

  std::mutex Mutex; // guards Slots (not the slots' contents)
  std::unordered_map<uint64_t, std::unique_ptr<KernelSlot>> Slots;

  std::atomic<uint64_t> MemoryHits{0};
  std::atomic<uint64_t> DiskHits{0};
  std::atomic<uint64_t> Compiles{0};
  std::atomic<uint64_t> CorruptEntries{0};
  std::atomic<double> CompileMs{0}, LoadMs{0};

  KernelSlot& slot(uint64_t key) {
    std::lock_guard<std::mutex> lock(Mutex);
    std::unique_ptr<KernelSlot>& slot = Slots[key];
    if (!slot)
      slot = std::make_unique<KernelSlot>();
    return *slot;
  }

  std::vector<char> read_or_compile(const KernelRequest& request, uint64_t key, Kernel& kernel);
};

std::vector<char> KernelCache::Impl::read_or_compile(const KernelRequest& request, uint64_t key,
                                                     Kernel& kernel) {
  std::vector<char> cubin;
  if (Disk) {
    switch (Disk->read(key, cubin)) {
    case DiskCache::Lookup::Hit:
      ++DiskHits;
      kernel.from_disk = true;
      return cubin;
    case DiskCache::Lookup::Corrupt:
      ++CorruptEntries;
      break;
    case DiskCache::Lookup::Missing:
      break;
    }
  }
  CompileResult compiled = NvrtcCompiler(*Nvrtc).compile(request.name, request.source, Arch, request.options);
  ++Compiles;
  kernel.compile_ms = compiled.milliseconds;
  CompileMs.fetch_add(compiled.milliseconds);
  if (Disk) {
    std::string why;
    if (!Disk->write(key, compiled.cubin, &why))
      warn_disk_write_failed(why);
  }
  return std::move(compiled.cubin);
}

KernelCache::KernelCache(const NvrtcApi* nvrtc, const DriverApi* driver, std::string arch,
                         KernelCacheConfig config)
    : P(std::make_unique<Impl>()) {
  P->Nvrtc = nvrtc;
  P->Driver = driver;
  P->Arch = std::move(arch);
  P->Context = config.context;
  // GPUKIT_CACHE=off wins over everything: it is the user's switch.
  if (disk_cache_enabled())
    P->Directory = config.directory ? *config.directory : cache_directory();
  if (!P->Directory.empty())
    P->Disk.emplace(P->Directory);
}

// Out of line: Impl is complete here. Unloads every module.
KernelCache::~KernelCache() = default;

uint64_t KernelCache::key(const KernelRequest& request) const {
  if (!P->Nvrtc)
    throw Error(ErrorKind::Unavailable,
                fmt::format("cannot compile kernel '{}': {}", request.name, NvrtcApi::load_error()));
  return kernel_cache_key(request.name, request.source,
                          NvrtcCompiler::cubin_options(P->Arch, request.options), P->Nvrtc->major,
                          P->Nvrtc->minor);
}

const Kernel& KernelCache::get(const KernelRequest& request) {
  uint64_t key = this->key(request);
  KernelSlot& slot = P->slot(key);
  std::lock_guard<std::mutex> lock(slot.Mutex);
  if (slot.Compiled) {
    ++P->MemoryHits;
    return *slot.Compiled;
  }

  auto kernel = std::make_unique<Kernel>();
  kernel->name = std::string(request.name);
  kernel->key = key;
  kernel->cubin = P->read_or_compile(request, key, *kernel);
  if (P->Driver) {
    auto start = std::chrono::steady_clock::now();
    Module module(*P->Driver, P->Context, kernel->cubin, kernel->name);
    kernel->function = module.function(kernel->name);
    kernel->load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    P->LoadMs.fetch_add(kernel->load_ms);
    slot.Loaded = std::move(module);
  }
  slot.Compiled = std::move(kernel);
  return *slot.Compiled;
}

KernelCacheStats KernelCache::stats() const {
  KernelCacheStats stats;
  stats.memory_hits = P->MemoryHits.load();
  stats.disk_hits = P->DiskHits.load();
  stats.compiles = P->Compiles.load();
  stats.corrupt_entries = P->CorruptEntries.load();
  stats.compile_ms = P->CompileMs.load();
  stats.load_ms = P->LoadMs.load();
  return stats;
}

const std::string& KernelCache::directory() const { return P->Directory; }
const std::string& KernelCache::arch() const { return P->Arch; }

} // namespace gpukit::rt
