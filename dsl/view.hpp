// Views: arrays that share another array's buffer with their own shape,
// strides and offset, made without copying (NumPy's basic indexing).
//
//   auto m = Array<float>::arange({4, 6});
//   auto rows = m.slice({Slice(1, 3)});            // m[1:3, :]   -> [2, 6]
//   auto every_other = m.slice({Slice::all(), Slice(0, 6, 2)});   // m[:, ::2]
//   auto t = m.transpose();                        // m.T         -> [6, 4]
//   auto col = m.select(1, 2);                     // m[:, 2]     -> [4]
//   auto b = broadcast_to(bias, {4, 6});           // stride 0 on axis 0
//   m.slice({Slice(0, 2)}) = 0.0f;                 // writes only those rows
//
// Every view is an Array<T> that reads and writes its buffer's elements:
// use it in expressions, assign into it (except a broadcast view, whose
// elements repeat), or copy() it into a dense array. reshape() needs
// contiguous data and says so otherwise. This header holds the geometry
// (non-template); Array<T>'s members call it.
//
// 0-d arrays (Shape::scalar()): select() on a 1-D array gives one; reshape
// moves between [] and [1] (or [1, 1], ...); expand_dims(0) gives [1];
// broadcast_to from [] repeats the element everywhere. Slicing, select and
// transpose need an axis and throw Error{Shape} naming the 0-d array.
#pragma once

#include "dsl/array_base.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

namespace gpukit {

/// One axis of a slice, NumPy's start:stop:step. Negative start and stop
/// count from the end; out-of-range bounds are clipped (as in NumPy); a
/// missing bound is the axis's beginning or end in the step's direction.
///   Slice(2, 5)  // 2:5      Slice(0, 10, 2)  // 0:10:2      Slice::all()  // :
///   Slice::from(3)  // 3:    Slice::to(-1)  // :-1           Slice::reversed()  // ::-1
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;

  Slice() = default;
  Slice(int64_t start, int64_t stop, int64_t step = 1) : start(start), stop(stop), step(step) {}
  static Slice all() { return {}; }
  static Slice from(int64_t start) {
    Slice s;
    s.start = start;
    return s;
  }
  static Slice to(int64_t stop) {
    Slice s;
    s.stop = stop;
    return s;
  }
  static Slice reversed() {
    Slice s;
    s.step = -1;
    return s;
  }
};

namespace detail {

/// A view's shape, strides and offset (elements from the buffer's start).
struct ViewGeometry {
  Shape shape;
  Strides strides{};
  int64_t offset = 0;
};

/// The geometry of `a` sliced by `slices` (one per leading axis; the rest
/// are whole). Error{Shape} for more slices than axes (any slice of a 0-d
/// array) or a step of 0.
ViewGeometry slice_view(const ArrayBase& a, std::span<const Slice> slices);
/// `a` with axis `axis` (negative counts from the end) sliced by `s`.
ViewGeometry slice_view(const ArrayBase& a, int axis, Slice s);
/// Axis `axis` of `a` at `index` (negative counts from the end), removed:
/// a 1-D array gives a 0-d view of one element. Error{Shape} for an index
/// outside the axis or a 0-d array.
ViewGeometry select_view(const ArrayBase& a, int axis, int64_t index);
/// The axes of `a` in the order `axes` (a permutation of 0..rank-1; none
/// for a 0-d array, which is then unchanged).
ViewGeometry permute_view(const ArrayBase& a, std::span<const int> axes);
/// The axes of `a` reversed; Error{Shape} for a 0-d array (no axes).
ViewGeometry transpose_view(const ArrayBase& a);
/// `a`'s elements (row-major) as `shape`; Error{Shape} when `a` is not
/// contiguous or the sizes differ.
ViewGeometry reshape_view(const ArrayBase& a, const Shape& shape);
/// A new axis of extent 1 at position `axis` (0..rank; negative counts from
/// the end): [] -> [1], [R] -> [1, R] or [R, 1].
ViewGeometry expand_dims_view(const ArrayBase& a, int axis);
/// `a` broadcast to `shape` (NumPy rules, stride 0 on repeated axes; a 0-d
/// `a` broadcasts to any shape); Error{Shape} naming both shapes when it
/// cannot be.
ViewGeometry broadcast_view(const ArrayBase& a, const Shape& shape);

} // namespace detail
} // namespace gpukit
