// Shape: the extents of an array, 0-D to 4-D, outermost first.
//
//   gpukit::Shape s{8192, 4096};
//   s.size();        // 33554432 elements
//   s.to_string();   // "[8192, 4096]"
//   Shape::scalar(); // 0-d: rank 0, one element, "[]" (a full reduction's result)
//
// A Shape is a plain value (no heap). It holds extents only: an array's
// strides and offset live in the array (dsl/array_base.hpp), so a view and
// a dense array of one shape compare equal.
//
// The 0-d shape is spelled Shape::scalar() (or Shape::of() of no extents),
// never with empty braces: `Shape{}` is the default constructor's empty 1-D
// shape [0] (C++ value-initialises from `{}`), so `Shape({})` is an error
// rather than a second meaning of the same braces.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace gpukit {

class Shape {
public:
  static constexpr unsigned kMaxRank = 4;

  /// An empty 1-D shape, [0].
  Shape() = default;
  /// Throws Error{Shape} for a rank outside 1..4 (0-d: Shape::scalar()), a
  /// negative extent or an element count that overflows int64.
  Shape(std::initializer_list<int64_t> extents);
  /// A 1-D shape: `Array<float> x(1024)`.
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Shape(I n) : Shape({static_cast<int64_t>(n)}) {}

  /// The shape with `extents` (0 to 4 of them; none is Shape::scalar());
  /// the same checks as above.
  static Shape of(std::span<const int64_t> extents);
  /// The 0-d shape []: rank 0, one element (NumPy's shape `()`).
  static Shape scalar();

  /// 0 for Shape::scalar(), else 1..4.
  unsigned rank() const { return Rank; }
  int64_t operator[](unsigned axis) const { return Extents[axis]; }
  /// The number of elements (the product of the extents).
  int64_t size() const { return Size; }

  bool operator==(const Shape& other) const {
    return Rank == other.Rank && Extents == other.Extents;
  }

  /// "[8192, 4096]"; "[]" for the 0-d shape.
  std::string to_string() const;

  /// The extents as a span of rank() values.
  std::span<const int64_t> extents() const { return {Extents.data(), Rank}; }

private:
  void init(std::span<const int64_t> extents);

  std::array<int64_t, kMaxRank> Extents{};
  int64_t Size = 0;
  uint8_t Rank = 1;
};

inline std::string to_string(const Shape& shape) { return shape.to_string(); }

} // namespace gpukit
