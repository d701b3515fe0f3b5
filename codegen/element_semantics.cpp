#include "codegen/element_semantics.hpp"

namespace gpukit::codegen::sem {

ir::Constant cast_constant(const ir::Constant& c, DType to) {
  return with_compute_type(c.type, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    From v = constant_value<From>(c);
    return with_compute_type(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      return make_constant<To>(to, cast_to<To>(v, to));
    });
  });
}

} // namespace gpukit::codegen::sem
