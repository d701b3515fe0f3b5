#include "runtime/nvrtc_api.hpp"

#include "runtime/dynamic_library.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

namespace gpukit::rt {

namespace {

struct LoadedNvrtc {
  std::optional<DynamicLibrary> Library;
  NvrtcApi Api;
  bool Usable = false;
  std::string Error;
};

/// Newest first: libnvrtc.so is the toolkit's own symlink, the versioned
/// names are what runtime-only packages install.
constexpr const char* NvrtcNames[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                      "libnvrtc.so.11.2"};

/// The toolkit library directories to search before the loader path, in
/// order, without duplicates.
std::vector<std::string> search_directories() {
  std::vector<std::string> dirs;
  auto add = [&](std::string dir) {
    if (dir.empty() || std::find(dirs.begin(), dirs.end(), dir) != dirs.end())
      return;
    dirs.push_back(std::move(dir));
  };
  for (const char* variable : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* root = std::getenv(variable); root && *root)
      add(std::string(root) + "/lib64");
  add("/usr/local/cuda/lib64");
  return dirs;
}

/// Resolves every entry point of `library` into `api`; returns the missing ones.
std::vector<const char*> resolve(const DynamicLibrary& library, NvrtcApi& api) {
  std::vector<const char*> missing;
#define GPUKIT_RESOLVE(name)                                                                       \
  api.name = reinterpret_cast<decltype(&::name)>(library.symbol(#name));                           \
  if (!api.name)                                                                                   \
    missing.push_back(#name);
  GPUKIT_NVRTC_FUNCTIONS(GPUKIT_RESOLVE)
#undef GPUKIT_RESOLVE
  return missing;
}

LoadedNvrtc load_nvrtc() {
  LoadedNvrtc loaded;
  std::vector<std::string> dirs = search_directories();
  std::vector<std::string> candidates;
  for (const std::string& dir : dirs)
    for (const char* name : NvrtcNames)
      candidates.push_back(fmt::format("{}/{}", dir, name));
  for (const char* name : NvrtcNames)
    candidates.emplace_back(name); // the loader path: LD_LIBRARY_PATH, ld.so.cache

  std::vector<std::string> incomplete; // libraries found but lacking entry points
  for (const std::string& candidate : candidates) {
    std::optional<DynamicLibrary> library = DynamicLibrary::open(candidate);
    if (!library)
      continue;
    NvrtcApi api;
    std::vector<const char*> missing = resolve(*library, api);
    if (!missing.empty()) {
      incomplete.push_back(fmt::format("{} lacks {}", library->loaded_path(), fmt::join(missing, ", ")));
      continue;
    }
    if (api.nvrtcVersion(&api.major, &api.minor) != NVRTC_SUCCESS) {
      incomplete.push_back(fmt::format("{}: nvrtcVersion failed", library->loaded_path()));
      continue;
    }
    api.path = library->loaded_path();
    loaded.Api = api;
    loaded.Library = std::move(library);
    loaded.Usable = true;
    return loaded;
  }

  std::string where = dirs.empty() ? std::string("the loader path")
                                   : fmt::format("{} and the loader path", fmt::join(dirs, ", "));
  loaded.Error = fmt::format("NVRTC JIT compiler not available (tried: {} in {}{}{}); install the "
                             "CUDA toolkit's NVRTC (11.2 or newer) or set CUDA_PATH to its root",
                             fmt::join(NvrtcNames, ", "), where, incomplete.empty() ? "" : "; ",
                             fmt::join(incomplete, "; "));
  return loaded;
}

const LoadedNvrtc& loaded_nvrtc() {
  static const LoadedNvrtc Loaded = load_nvrtc();
  return Loaded;
}

} // namespace

const NvrtcApi* NvrtcApi::load() {
  const LoadedNvrtc& loaded = loaded_nvrtc();
  return loaded.Usable ? &loaded.Api : nullptr;
}

const std::string& NvrtcApi::load_error() { return loaded_nvrtc().Error; }

} // namespace gpukit::rt
