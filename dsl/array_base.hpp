// ArrayBase: what every Array<T> is, whatever its T: a shape, an element
// type, a name and a (shared) buffer. The DSL's non-template machinery
// (shape checks, aliasing, launches) works on ArrayBase, so it is compiled
// once, not once per element type.
//
//   const detail::ArrayBase& a = x;        // any Array<T>
//   a.shape(); a.dtype(); a.address();
//
// Users reach these members through Array<T>.
#pragma once

#include "codegen/dtype.hpp"
#include "dsl/buffer.hpp"
#include "dsl/shape.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace gpukit::detail {

/// Selects the constructor that shares another array's buffer.
struct ShareTag {};

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
  rt::Allocation allocation() const {
    return Storage ? Storage->allocation() : rt::Allocation{};
  }
  /// The address of element 0 (0 for an empty or moved-from array).
  uint64_t address() const { return Address; }
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
  /// Throws Error{Usage} unless `name` is a C identifier.
  void set_name(std::string_view name);

  void copy_from_host(const void* src, size_t bytes);
  void copy_to_host(void* dst, size_t bytes) const;

private:
  std::shared_ptr<Buffer> Storage;
  uint64_t Address = 0;
  Shape Extents;
  DType Type;
  std::string Name;
};

} // namespace gpukit::detail
