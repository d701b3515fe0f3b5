// DynamicLibrary: an owned dlopen() handle. GPUkit reaches the CUDA driver and
// NVRTC only through it, so nothing links against them.
//
//   std::string why;
//   if (auto lib = DynamicLibrary::open("libnvrtc.so", &why))
//     void* f = lib->symbol("nvrtcVersion");
//
// The handle is closed when the object dies. It does not search directories
// itself: `path` goes to dlopen() as given (a bare name uses the loader path).
#pragma once

#include <optional>
#include <string>

namespace gpukit::rt {

class DynamicLibrary {
public:
  /// How long the library's code stays mapped.
  enum class Lifetime {
    /// dlclose() unmaps it when the handle dies.
    UntilClosed,
    /// dlclose() drops the reference but the code stays mapped
    /// (RTLD_NODELETE). For libraries whose own threads or atexit handlers
    /// may still run after our static destructors: libcuda.
    Process,
  };

  /// Opens `path` with RTLD_NOW | RTLD_LOCAL. On failure returns nullopt and,
  /// when `error` is given, stores dlerror()'s text there.
  static std::optional<DynamicLibrary> open(const std::string& path, std::string* error = nullptr,
                                            Lifetime lifetime = Lifetime::UntilClosed);

  /// The address of `name`, or nullptr when the library does not export it.
  void* symbol(const char* name) const;

  /// The path given to open().
  const std::string& path() const { return Path; }
  /// The file the loader actually mapped (resolves bare names), or path()
  /// when the loader cannot say.
  std::string loaded_path() const;

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

private:
  DynamicLibrary(void* handle, std::string path) : Handle(handle), Path(std::move(path)) {}
  void close();

  void* Handle = nullptr;
  std::string Path;
};

} // namespace gpukit::rt
