#include "codegen/kernel_abi.hpp"

#include "codegen/element_semantics.hpp"

#include <cstring>

namespace gpukit::codegen {

unsigned scalar_argument_size(DType t) {
  return sem::with_compute_type(t, [](auto tag) -> unsigned { return sizeof(typename decltype(tag)::type); });
}

void write_scalar_argument(const ir::Constant& value, DType t, void* dst) {
  ir::Constant c = sem::cast_constant(value, t);
  sem::with_compute_type(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = sem::constant_value<T>(c);
    std::memcpy(dst, &v, sizeof(T));
  });
}

} // namespace gpukit::codegen
