// KernelCache: compiled kernels by source. The first request for a source
// compiles it with NVRTC (or reads the CUBIN from the on-disk cache) and
// loads it; later requests return the same Kernel from memory.
//
//   const Kernel& k = rt.kernels().get({"ew_7c1f09a2", source});
//   rt.launch(k, shape, args);
//
// Keys hash the entry point's name, the source, the options, NVRTC's
// version and the arch (xxHash64). Disk entries live under
// $GPUKIT_CACHE_DIR, else $XDG_CACHE_HOME/gpukit, else ~/.cache/gpukit;
// they are written to a temporary file and renamed, carry a checksum, and a
// corrupt entry is recompiled. GPUKIT_CACHE=off disables the disk cache.
// runtime/disk_cache.hpp lists, sizes and clears the directory (for the CLI).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::rt {

/// What to compile: a kernel entry point's name and the complete source.
struct KernelRequest {
  std::string_view name;
  std::string_view source;
  /// Extra NVRTC options (the arch and -std are added by the compiler).
  std::vector<std::string> options = {};
};

/// A compiled kernel. Owned by the cache; the reference stays valid for the
/// life of the process.
struct Kernel {
  std::string name;
  uint64_t key = 0;          ///< the cache key
  CUfunction function = nullptr; ///< nullptr on the CPU fallback (compiled, not loaded)
  std::vector<char> cubin;
  double compile_ms = 0;     ///< NVRTC time, 0 when it came from disk
  double load_ms = 0;        ///< cuModuleLoadData and the function lookup
  bool from_disk = false;
};

struct KernelCacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;
  uint64_t corrupt_entries = 0;
  double compile_ms = 0; ///< NVRTC time, over every compile
  double load_ms = 0;    ///< module loads, over every kernel loaded
};

struct DriverApi;
struct NvrtcApi;

/// Settings beyond the compiler and the arch; the defaults suit the Runtime.
struct KernelCacheConfig {
  /// The context modules are loaded into; made current before each load
  /// (callers may be on any thread). Ignored without a driver.
  CUcontext context = nullptr;
  /// The disk cache directory; nullopt: cache_directory() unless
  /// GPUKIT_CACHE=off; empty: no disk cache.
  std::optional<std::string> directory = std::nullopt;
};

/// The cache key of a request: xxHash64 over the entry point's name, the
/// source, the complete NVRTC options (which carry the arch), NVRTC's
/// version and the cache format. Equal in every process for equal inputs.
uint64_t kernel_cache_key(std::string_view name, std::string_view source,
                          const std::vector<std::string>& full_options, int nvrtc_major,
                          int nvrtc_minor);

class KernelCache {
public:
  /// `driver` may be nullptr: kernels are then compiled (and cached) but not loaded.
  /// `nvrtc` may be nullptr: get() then throws Error{Unavailable}.
  KernelCache(const NvrtcApi* nvrtc, const DriverApi* driver, std::string arch,
              KernelCacheConfig config = {});
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  /// The kernel for `request`, compiling and loading it on first use.
  /// Throws Error{Compile} with NVRTC's log beside the numbered source, or
  /// Error{Unavailable} when NVRTC is missing. Thread-safe.
  const Kernel& get(const KernelRequest& request);

  KernelCacheStats stats() const;
  /// The on-disk cache directory, empty when the disk cache is off.
  const std::string& directory() const;
  const std::string& arch() const;

  /// The key get() would use for `request` (Error{Unavailable} without NVRTC).
  uint64_t key(const KernelRequest& request) const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace gpukit::rt
