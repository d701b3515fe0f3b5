#include "dsl/view.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gpukit::detail {

namespace {

std::string describe_array(const ArrayBase& a) {
  return a.name().empty() ? fmt::format("an array of shape {}", a.shape().to_string())
                          : fmt::format("{} {}", a.name(), a.shape().to_string());
}

/// Error{Shape} when `a` is 0-d: `what` needs an axis and it has none;
/// `missing` completes "... is 0-d and has no ".
void require_axes(const ArrayBase& a, std::string_view what, std::string_view missing) {
  if (a.shape().rank() == 0)
    throw Error(ErrorKind::Shape,
                fmt::format("{}: {} is 0-d and has no {}", what, describe_array(a), missing));
}

/// `axis` (negative counts from the end) as 0..count-1, or Error{Shape}.
/// `count` may exceed a's rank (expand_dims counts the places for a new axis).
unsigned axis_index(int axis, unsigned count, const ArrayBase& a, std::string_view what) {
  int k = axis < 0 ? axis + static_cast<int>(count) : axis;
  if (k < 0 || k >= static_cast<int>(count))
    throw Error(ErrorKind::Shape, fmt::format("{}: axis {} is out of range for {} (axes 0..{})",
                                              what, axis, describe_array(a), count - 1));
  return static_cast<unsigned>(k);
}

/// An axis of `a` as 0..rank-1; Error{Shape} for a 0-d `a` or an axis out of range.
unsigned normalize_axis(int axis, const ArrayBase& a, std::string_view what) {
  require_axes(a, what, fmt::format("axis {}", axis));
  return axis_index(axis, a.shape().rank(), a, what);
}

} // namespace

ViewGeometry slice_view(const ArrayBase& a, std::span<const Slice> slices) {
  const Shape& shape = a.shape();
  if (!slices.empty())
    require_axes(a, "slice",
                 "axes to slice; read its element with item_sync(), or view it as [1] with "
                 "reshape({1})");
  if (slices.size() > shape.rank())
    throw Error(ErrorKind::Shape, fmt::format("slice: {} slices for {}, which has {} axes",
                                              slices.size(), describe_array(a), shape.rank()));
  std::array<int64_t, Shape::kMaxRank> extents{};
  ViewGeometry g;
  g.offset = a.offset();
  for (unsigned k = 0; k < shape.rank(); ++k) {
    int64_t n = shape[k];
    Slice s = k < slices.size() ? slices[k] : Slice::all();
    if (s.step == 0)
      throw Error(ErrorKind::Shape,
                  fmt::format("slice: axis {} of {} has step 0; a step is a non-zero element "
                              "distance (use select() to pick one element)",
                              k, describe_array(a)));
    // NumPy's PySlice_AdjustIndices: negative bounds count from the end,
    // then clip to [0, n] (step > 0) or [-1, n - 1] (step < 0).
    auto adjust = [&](std::optional<int64_t> bound, int64_t missing) {
      if (!bound)
        return missing;
      int64_t v = *bound < 0 ? *bound + n : *bound;
      return s.step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
    };
    int64_t start = adjust(s.start, s.step > 0 ? 0 : n - 1);
    int64_t stop = adjust(s.stop, s.step > 0 ? n : -1);
    int64_t count = s.step > 0 ? (stop > start ? (stop - start + s.step - 1) / s.step : 0)
                               : (start > stop ? (start - stop - s.step - 1) / -s.step : 0);
    extents[k] = count;
    g.strides[k] = a.strides()[k] * s.step;
    if (count > 0)
      g.offset += start * a.strides()[k];
  }
  g.shape = Shape::of({extents.data(), shape.rank()});
  return g;
}

ViewGeometry slice_view(const ArrayBase& a, int axis, Slice s) {
  unsigned k = normalize_axis(axis, a, "slice");
  std::array<Slice, Shape::kMaxRank> slices{};
  slices[k] = s;
  return slice_view(a, std::span<const Slice>(slices.data(), k + 1));
}

ViewGeometry select_view(const ArrayBase& a, int axis, int64_t index) {
  const Shape& shape = a.shape();
  unsigned k = normalize_axis(axis, a, "select");
  int64_t i = index < 0 ? index + shape[k] : index;
  if (i < 0 || i >= shape[k])
    throw Error(ErrorKind::Shape, fmt::format("select: index {} is out of range for axis {} of {}",
                                              index, k, describe_array(a)));
  ViewGeometry g;
  std::array<int64_t, Shape::kMaxRank> extents{};
  unsigned r = 0;
  for (unsigned j = 0; j < shape.rank(); ++j) {
    if (j == k)
      continue;
    extents[r] = shape[j];
    g.strides[r++] = a.strides()[j];
  }
  g.shape = Shape::of({extents.data(), r});
  g.offset = a.offset() + i * a.strides()[k];
  return g;
}

ViewGeometry permute_view(const ArrayBase& a, std::span<const int> axes) {
  const Shape& shape = a.shape();
  std::array<bool, Shape::kMaxRank> seen{};
  bool valid = axes.size() == shape.rank();
  for (int axis : axes) {
    valid = valid && axis >= 0 && axis < static_cast<int>(shape.rank()) && !seen[axis];
    if (valid)
      seen[axis] = true;
  }
  if (!valid)
    throw Error(ErrorKind::Shape,
                fmt::format("permute: [{}] is not a permutation of the {} axes of {}",
                            fmt::join(axes, ", "), shape.rank(), describe_array(a)));
  ViewGeometry g;
  std::array<int64_t, Shape::kMaxRank> extents{};
  for (unsigned k = 0; k < axes.size(); ++k) {
    extents[k] = shape[axes[k]];
    g.strides[k] = a.strides()[axes[k]];
  }
  g.shape = Shape::of({extents.data(), shape.rank()});
  g.offset = a.offset();
  return g;
}

ViewGeometry transpose_view(const ArrayBase& a) {
  // NumPy returns a 0-d array itself; here reversing no axes is more likely
  // a full reduction's result used where a matrix was meant.
  require_axes(a, "transpose", "axes to reverse; use the array itself");
  std::array<int, Shape::kMaxRank> axes{};
  unsigned rank = a.shape().rank();
  for (unsigned k = 0; k < rank; ++k)
    axes[k] = static_cast<int>(rank - 1 - k);
  return permute_view(a, {axes.data(), rank});
}

ViewGeometry reshape_view(const ArrayBase& a, const Shape& shape) {
  if (shape.size() != a.size())
    throw Error(ErrorKind::Shape,
                fmt::format("reshape: cannot reshape {} ({} elements) to {} ({} elements)",
                            describe_array(a), a.size(), shape.to_string(), shape.size()));
  if (!a.is_contiguous())
    throw Error(ErrorKind::Shape,
                fmt::format("reshape: {} is a non-contiguous view, so its elements cannot be "
                            "reinterpreted as {} without a copy; use copy().reshape(...)",
                            describe_array(a), shape.to_string()));
  return {shape, row_major_strides(shape), a.offset()};
}

ViewGeometry expand_dims_view(const ArrayBase& a, int axis) {
  const Shape& shape = a.shape();
  if (shape.rank() == Shape::kMaxRank)
    throw Error(ErrorKind::Shape, fmt::format("expand_dims: {} already has {} axes, the most an "
                                              "array can have",
                                              describe_array(a), Shape::kMaxRank));
  // rank + 1 places for the new axis: a 0-d array has one (0 or -1), giving [1].
  unsigned k = axis_index(axis, shape.rank() + 1, a, "expand_dims");
  ViewGeometry g;
  std::array<int64_t, Shape::kMaxRank> extents{};
  for (unsigned j = 0, r = 0; j <= shape.rank(); ++j) {
    if (j == k) {
      extents[j] = 1;
      g.strides[j] = 0;
      continue;
    }
    extents[j] = shape[r];
    g.strides[j] = a.strides()[r++];
  }
  g.shape = Shape::of({extents.data(), shape.rank() + 1});
  g.offset = a.offset();
  return g;
}

ViewGeometry broadcast_view(const ArrayBase& a, const Shape& shape) {
  const Shape& from = a.shape();
  bool valid = from.rank() <= shape.rank();
  ViewGeometry g{shape, {}, a.offset()};
  unsigned lead = shape.rank() - std::min(from.rank(), shape.rank());
  for (unsigned k = 0; valid && k < from.rank(); ++k) {
    int64_t e = from[k], target = shape[lead + k];
    valid = e == target || e == 1;
    g.strides[lead + k] = e == 1 ? 0 : a.strides()[k];
  }
  if (!valid)
    throw Error(ErrorKind::Shape,
                fmt::format("broadcast_to: cannot broadcast {} to {}: trailing axes must be equal "
                            "or 1 (NumPy rules)",
                            describe_array(a), shape.to_string()));
  return g;
}

} // namespace gpukit::detail
