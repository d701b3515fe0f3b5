#include "dsl/broadcast.hpp"

#include "dsl/expression_kernel.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpukit::detail {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  unsigned rank = std::max(a.rank(), b.rank());
  std::array<int64_t, Shape::kMaxRank> extents{};
  for (unsigned k = 0; k < rank; ++k) {
    // Axis k from the end.
    int64_t x = k < a.rank() ? a[a.rank() - 1 - k] : 1;
    int64_t y = k < b.rank() ? b[b.rank() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    extents[rank - 1 - k] = x == 1 ? y : x;
  }
  return Shape::of({extents.data(), rank});
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  std::optional<Shape> b = broadcast_shapes(from, to);
  return b && *b == to;
}

Shape expression_shape(const AssignmentType& type, llvm::ArrayRef<const ArrayBase*> leaves,
                       llvm::ArrayRef<ir::Constant> scalars) {
  Shape shape = leaves[0]->shape();
  for (size_t k = 1; k < leaves.size(); ++k) {
    if (std::optional<Shape> b = broadcast_shapes(shape, leaves[k]->shape())) {
      shape = *b;
      continue;
    }
    // Name the first leaf that the culprit is incompatible with.
    llvm::SmallVector<std::string, 8> names;
    for (size_t j = 0; j < leaves.size(); ++j)
      names.push_back(leaves[j]->name().empty() ? fmt::format("in{}", j) : leaves[j]->name());
    size_t other = 0;
    while (other + 1 < k && broadcast_shapes(leaves[other]->shape(), leaves[k]->shape()))
      ++other;
    ExprPrinter printer(names, scalars);
    type.print(printer, 0);
    throw Error(ErrorKind::Shape,
                fmt::format("cannot broadcast {} {} with {} {} in `{}` (NumPy rules: aligned at "
                            "the last axis, extents must be equal or 1)",
                            names[other], leaves[other]->shape().to_string(), names[k],
                            leaves[k]->shape().to_string(), printer.take()));
  }
  return shape;
}

void plan_iteration(llvm::ArrayRef<ArrayBase*> outputs, llvm::ArrayRef<const ArrayBase*> leaves,
                    IterationSpace& space) {
  const Shape& shape = outputs[0]->shape();
  const unsigned rank = shape.rank();
  const size_t slots = outputs.size() + leaves.size();
  space.strides.resize(slots);
  space.flat = true;
  auto slot = [&](size_t s) -> const ArrayBase& {
    return s < outputs.size() ? *outputs[s] : *leaves[s - outputs.size()];
  };
  for (size_t s = 0; s < slots; ++s) {
    const ArrayBase& a = slot(s);
    space.flat = space.flat && a.shape() == shape && a.is_contiguous();
    // Right-aligned; missing leading axes and extent-1 axes repeat (stride 0).
    unsigned lead = rank - a.shape().rank();
    for (unsigned k = 0; k < rank; ++k)
      space.strides[s][k] = k < lead || a.shape()[k - lead] == 1 ? 0 : a.strides()[k - lead];
  }
  if (space.flat) {
    space.rank = 1;
    space.extents[0] = shape.size();
    for (auto& st : space.strides)
      st[0] = 1;
    return;
  }

  // Drop extent-1 axes, then merge axis k into the kept axis before it
  // when every operand steps over it as one: stride[prev] == stride[k] * extent[k].
  unsigned r = 0;
  for (unsigned k = 0; k < rank; ++k) {
    int64_t e = shape[k];
    if (e == 1)
      continue;
    bool merge = r > 0;
    for (size_t s = 0; s < slots && merge; ++s)
      merge = space.strides[s][r - 1] == space.strides[s][k] * e;
    if (merge) {
      space.extents[r - 1] *= e;
      for (auto& st : space.strides)
        st[r - 1] = st[k];
      continue;
    }
    space.extents[r] = e;
    for (auto& st : space.strides)
      st[r] = st[k];
    ++r;
  }
  if (r == 0) { // a single element
    space.rank = 1;
    space.extents[0] = 1;
    for (auto& st : space.strides)
      st[0] = 1;
    space.flat = true;
    return;
  }
  space.rank = r;
  // Dense after merging (a transposed [1, N], a contiguous slice of rows):
  // the flat kernel, provided no operand broadcasts.
  bool flat = r == 1;
  for (size_t s = 0; s < slots && flat; ++s)
    flat = space.strides[s][0] == 1;
  space.flat = flat;
}

} // namespace gpukit::detail
