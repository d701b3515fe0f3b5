#include "runtime/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <utility>

namespace gpukit::rt {

std::optional<DynamicLibrary> DynamicLibrary::open(const std::string& path, std::string* error,
                                                   Lifetime lifetime) {
  int flags = RTLD_NOW | RTLD_LOCAL;
  if (lifetime == Lifetime::Process)
    flags |= RTLD_NODELETE;
  dlerror(); // clear a stale message so the one we report is ours
  void* handle = dlopen(path.c_str(), flags);
  if (!handle) {
    if (error) {
      const char* message = dlerror();
      *error = message ? message : path + ": dlopen failed";
    }
    return std::nullopt;
  }
  return DynamicLibrary(handle, path);
}

void* DynamicLibrary::symbol(const char* name) const {
  if (!Handle)
    return nullptr;
  return dlsym(Handle, name);
}

std::string DynamicLibrary::loaded_path() const {
  link_map* map = nullptr;
  if (Handle && dlinfo(Handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return Path;
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : Handle(std::exchange(other.Handle, nullptr)), Path(std::move(other.Path)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    close();
    Handle = std::exchange(other.Handle, nullptr);
    Path = std::move(other.Path);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() { close(); }

void DynamicLibrary::close() {
  if (Handle)
    dlclose(Handle);
  Handle = nullptr;
}

} // namespace gpukit::rt
