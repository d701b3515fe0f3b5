#include "dsl/shape.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <limits>

namespace gpukit {

static std::string format_extents(std::span<const int64_t> extents) {
  return fmt::format("[{}]", fmt::join(extents, ", "));
}

// Empty braces are not the 0-d shape: `Shape{}` is the default [0], and
// `Shape({})` reaching here would give the same braces a second meaning.
Shape::Shape(std::initializer_list<int64_t> extents) {
  if (extents.size() == 0)
    throw Error(ErrorKind::Shape,
                fmt::format("a Shape in braces has 1 to {} extents, given none ([]): write "
                            "Shape::scalar() for a 0-d shape (Shape{{}} is the empty 1-D shape [0])",
                            kMaxRank));
  init({extents.begin(), extents.size()});
}

Shape Shape::of(std::span<const int64_t> extents) {
  Shape shape;
  shape.init(extents);
  return shape;
}

Shape Shape::scalar() {
  Shape shape;
  shape.Rank = 0;
  shape.Size = 1;
  return shape;
}

void Shape::init(std::span<const int64_t> extents) {
  if (extents.size() > kMaxRank)
    throw Error(ErrorKind::Shape,
                fmt::format("a Shape has 0 to {} dimensions, given {} ({})", kMaxRank,
                            extents.size(), format_extents(extents)));
  Extents = {};
  Size = 1;
  unsigned axis = 0;
  for (int64_t e : extents) {
    if (e < 0)
      throw Error(ErrorKind::Shape,
                  fmt::format("shape {} has a negative extent", format_extents(extents)));
    if (e != 0 && Size > std::numeric_limits<int64_t>::max() / e)
      throw Error(ErrorKind::Shape, fmt::format("shape {} has more than 2^63 elements",
                                                format_extents(extents)));
    Extents[axis++] = e;
    Size *= e;
  }
  Rank = static_cast<uint8_t>(extents.size());
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (unsigned k = 0; k < Rank; ++k) {
    if (k)
      s += ", ";
    s += std::to_string(Extents[k]);
  }
  return s + "]";
}

} // namespace gpukit
