// libFuzzer target: any bytes given to the .npy reader must give an array or
// a gpukit::Error; an array read must write back and read again unchanged.
#include "dsl/text/npy.hpp"
#include "support/error.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpukit::text;
  HostArray a;
  try {
    a = parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const gpukit::Error&) {
    return 0;
  }
  HostArray b = parse_npy(to_npy(a), "again.npy");
  if (b.dtype != a.dtype || b.shape != a.shape || b.data != a.data)
    std::abort();
  return 0;
}
