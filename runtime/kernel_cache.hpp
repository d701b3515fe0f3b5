// KernelCache: compiled kernels by source. The first request for a source
// compiles it with NVRTC (or reads the CUBIN from the on-disk cache) and
// loads it; later requests return the same Kernel from memory.
//
//   const Kernel& k = rt.kernels().get({"ew_7c1f09a2", source});
//   rt.launch(k, shape, args);
//
// Keys hash the source, the options, NVRTC's version and the arch
// (xxHash64). Disk entries live under $GPUKIT_CACHE_DIR, else
// $XDG_CACHE_HOME/gpukit, else ~/.cache/gpukit; they are written to a
// temporary file and renamed, carry a checksum, and a corrupt entry is
// recompiled. GPUKIT_CACHE=off disables the disk cache.
#pragma once

#include <cuda.h>

#include <cstdint>
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
  bool from_disk = false;
};

struct KernelCacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;
  uint64_t corrupt_entries = 0;
};

struct DriverApi;
struct NvrtcApi;

class KernelCache {
public:
  /// `driver` may be nullptr: kernels are then compiled (and cached) but not loaded.
  KernelCache(const NvrtcApi* nvrtc, const DriverApi* driver, std::string arch);
  ~KernelCache();

  /// The kernel for `request`, compiling and loading it on first use.
  /// Throws Error{Compile} with NVRTC's log beside the numbered source, or
  /// Error{Unavailable} when NVRTC is missing. Thread-safe.
  const Kernel& get(const KernelRequest& request);

  KernelCacheStats stats() const;
  /// The on-disk cache directory, empty when the disk cache is off.
  const std::string& directory() const;
  const std::string& arch() const;
};

} // namespace gpukit::rt
