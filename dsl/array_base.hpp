// ArrayBase: what every Array<T> is, whatever its T: a shape, strides and
// an offset (in elements) into a (shared) buffer, an element type and a name. The DSL's non-template machinery
// (shape checks, aliasing, launches) works on ArrayBase, so it is compiled
// once, not once per element type.
//
//   const detail::ArrayBase& a = x;        // any Array<T>
//   a.shape(); a.dtype(); a.address();
//
// Users reach these members through Array<T>. A new array is dense and
// row-major; views (Array::slice, transpose, broadcast_to, ...) share the
// buffer with other strides and offset. Strides may be 0 (a broadcast axis)
// or negative (a reversed slice).
#pragma once

#include "codegen/dtype.hpp"
#include "dsl/buffer.hpp"
#include "dsl/shape.hpp"

#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace gpukit::detail {

/// Selects the constructor that shares another array's buffer.
struct ShareTag {};

/// Per-axis distances between neighbouring elements, in elements.
using Strides = std::array<int64_t, Shape::kMaxRank>;

/// The strides of a dense row-major array of `shape`.
Strides row_major_strides(const Shape& shape);

class ArrayBase {
public:
  const Shape& shape() const { return Extents; }
  /// The number of elements.
  int64_t size() const { return Extents.size(); }
  DType dtype() const { return Type; }
  /// The bytes the elements occupy (bool: one byte each).
  size_t bytes() const { return static_cast<size_t>(size()) * size_of(Type); }
  /// The name used in kernel source, labels and messages; empty when unnamed.
  const std::string& name() const { return Name; }
  /// The array's memory (device memory, or host memory on the CPU fallback).
  /// The pool may spill it and restore it elsewhere: exact only while the
  /// buffer is pinned (OperandPins), which every launch and copy does.
  rt::Allocation allocation() const {
    return Storage ? Storage->allocation() : rt::Allocation{};
  }
  /// The address of element 0 (0 for an empty or moved-from array); exact
  /// only while pinned, like allocation().
  uint64_t address() const {
    uint64_t base = Storage ? Storage->address() : 0;
    return base ? base + static_cast<uint64_t>(Offset) * size_of(Type) : 0;
  }
  /// The buffer (nullptr for a moved-from array): what OperandPins pins.
  Buffer* buffer() const { return Storage.get(); }
  /// Distance between neighbouring elements along each axis, in elements
  /// (the first rank() values are meaningful).
  const Strides& strides() const { return Steps; }
  /// Where element 0 is, in elements from the start of the buffer.
  int64_t offset() const { return Offset; }
  /// True when the elements are dense and row-major from element 0 (axes
  /// of extent 1 may have any stride); empty arrays are contiguous.
  bool is_contiguous() const;
  /// True when both are the same view: one address, shape and strides.
  bool same_view_as(const ArrayBase& other) const;
  /// True when both views may touch a common element: same buffer and
  /// intersecting [lowest, highest] element ranges (conservative).
  bool may_overlap(const ArrayBase& other) const;
  /// True when both arrays use one buffer (see Array::share()).
  bool shares_buffer_with(const ArrayBase& other) const {
    return Storage && Storage == other.Storage;
  }

protected:
  explicit ArrayBase(DType type) : Type(type) {}
  ArrayBase(DType type, const Shape& shape);
  ArrayBase(ArrayBase&& other) noexcept;
  ArrayBase& operator=(ArrayBase&& other) noexcept;
  ArrayBase(const ArrayBase&) = delete;
  ArrayBase& operator=(const ArrayBase&) = delete;
  ~ArrayBase() = default;

  /// Another array on the same buffer.
  ArrayBase(const ArrayBase& other, ShareTag);
  /// A view of `other`'s buffer: `shape`, `strides` and `offset` (elements
  /// from the buffer's start) are the caller's, and must stay inside it.
  ArrayBase(const ArrayBase& other, ShareTag, const Shape& shape, const Strides& strides,
            int64_t offset);
  /// Throws Error{Usage} unless `name` is a C identifier.
  void set_name(std::string_view name);

  /// Byte copies from element 0; the array must be contiguous (Array<T>
  /// gathers a strided view through a copy first).
  void copy_from_host(const void* src, size_t bytes);
  void copy_to_host(void* dst, size_t bytes) const;

private:
  std::shared_ptr<Buffer> Storage;
  Shape Extents;
  Strides Steps{};
  int64_t Offset = 0;
  DType Type;
  std::string Name;
};

} // namespace gpukit::detail
