// Array<T>: a dense 0-D to 4-D array in device memory (host memory on the
// CPU fallback), and the left-hand side of every expression.
//
//   auto x = gpukit::Array<float>::random({1 << 20}, /*seed=*/1, -1.0, 1.0);
//   gpukit::Array<float> out(x.shape());
//   out = 2.0f * x + sin(x);                  // one generated kernel
//   std::vector<float> h = out.to_host();     // waits for the result
//
// An Array owns its buffer and is move-only; `share()` makes a second Array
// on the same buffer, explicitly. `out = x` copies elements (like any other
// expression) and `Array<float> y = x.copy()` makes a new array. Memory comes
// only from rt::Runtime::get().allocator() and goes back to it when the last
// Array on a buffer is destroyed. T is one of float, double, gpukit::half,
// gpukit::bfloat16, int32_t, int64_t, uint8_t or bool (one byte, 0 or 1).
//
// Arrays can be named (`x.named("x")`): the name appears in generated
// kernels and in error messages; unnamed operands print as in0, in1, ...
//
// A 0-d array (Shape::scalar(), one element) is what a full reduction
// gives; it stays on the device and broadcasts against any shape
// (`out = x - mean`). item_sync() is the one way to read it as a C++
// scalar, and it waits:
//   Array<float> s(Shape::scalar());
//   s = 3.0f;                  // fills its one element
//   out = x * s;               // s repeats over every element of x
//   float v = s.item_sync();   // waits, then reads
//
// Views share the buffer without copying (dsl/view.hpp has the rules):
//   out = x + bias;                              // bias [C] broadcasts over x [R, C]
//   out = m.transpose() * 2.0f;                  // strided reads
//   m.slice({Slice(0, 2), Slice(0, 4, 2)}) = 0;  // writes only those elements
#pragma once

#include "dsl/array_base.hpp"
#include "dsl/element.hpp"
#include "dsl/expr.hpp"
#include "dsl/view.hpp"
#include "support/error.hpp"

#include <cmath>
#include <cstring>
#include <source_location>
#include <span>
#include <string_view>
#include <vector>

namespace gpukit {

namespace detail {

/// How a right-hand side updates the array: `out = e`, `out += e`, ...
enum class Update { Assign, Add, Sub, Mul, Div };

template <typename T, Update U, typename E>
void update_thunk(Array<T>& out, const void* rhs, const std::source_location& where);

/// The right-hand side of `out = e` (and `out += e`, ...), with the source
/// location of the statement. Array::operator= cannot take a defaulted
/// std::source_location itself; this converting constructor can, and its
/// default argument is evaluated at the user's assignment.
template <typename T, Update U> class Rhs {
public:
  template <typename E>
  Rhs(const E& e, std::source_location where = std::source_location::current())
      : Expr(&e), Apply(&update_thunk<T, U, E>), Where(where) {}

  void apply_to(Array<T>& out) const { Apply(out, Expr, Where); }

private:
  const void* Expr;
  void (*Apply)(Array<T>&, const void*, const std::source_location&);
  std::source_location Where;
};

/// A deterministic stream of doubles in [0, 1): SplitMix64, 53 bits a draw.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : State(seed) {}
  uint64_t next() {
    uint64_t z = (State += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t State;
};

/// The shape of an expression: the broadcast of its array leaves' shapes;
/// Error{Shape} when it has no array operand.
template <typename E> Shape shape_of_expression(const E& e);

} // namespace detail

template <typename T> class Array : public detail::ArrayBase {
  static_assert(Element<T>, "gpukit::Array<T>: " GPUKIT_ELEMENT_TYPES_MESSAGE);

public:
  using value_type = T;

  /// An empty array ([0], no memory).
  Array() : ArrayBase(dtype_of<T>) {}
  /// An uninitialised array of `shape`.
  explicit Array(const Shape& shape) : ArrayBase(dtype_of<T>, shape) {}
  /// A new array holding the value of `e`, of the broadcast shape of e's arrays:
  /// `Array<float> out(x + y);` (or `auto out = eval(x + y);`). Explicit:
  /// it allocates, and an implicit conversion would make `out = x + y`
  /// ambiguous with the assignment operators.
  template <ArrayExpr E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, Array>)
  explicit Array(const E& e, std::source_location where = std::source_location::current())
      : ArrayBase(dtype_of<T>, detail::shape_of_expression(e)) {
    detail::Rhs<T, detail::Update::Assign>(e, where).apply_to(*this);
  }

  Array(Array&&) noexcept = default;
  Array& operator=(Array&&) noexcept = default;
  /// Arrays are not copied implicitly: use copy() or share().
  Array(const Array&) = delete;
  ~Array() = default;

  /// Element-wise copy into this array (shapes must match). The copy
  /// assignment operator cannot learn its caller's location, so labels and
  /// messages of `out = x` (same T) have none.
  Array& operator=(const Array& other) {
    detail::Rhs<T, detail::Update::Assign>(other, std::source_location()).apply_to(*this);
    return *this;
  }
  /// Evaluates an expression (or a scalar) into this array with one kernel.
  /// Throws Error{Shape} when an operand's shape differs from this array's.
  Array& operator=(detail::Rhs<T, detail::Update::Assign> rhs) {
    rhs.apply_to(*this);
    return *this;
  }
  Array& operator+=(detail::Rhs<T, detail::Update::Add> rhs) {
    rhs.apply_to(*this);
    return *this;
  }
  Array& operator-=(detail::Rhs<T, detail::Update::Sub> rhs) {
    rhs.apply_to(*this);
    return *this;
  }
  Array& operator*=(detail::Rhs<T, detail::Update::Mul> rhs) {
    rhs.apply_to(*this);
    return *this;
  }
  Array& operator/=(detail::Rhs<T, detail::Update::Div> rhs) {
    rhs.apply_to(*this);
    return *this;
  }

  /// An array of `shape` holding `values` (row-major). Error{Shape} when the
  /// counts differ.
  static Array from_host(std::span<const T> values, const Shape& shape) {
    Array a(shape);
    a.check_count(values.size(), "from_host");
    a.copy_from_host(values.data(), a.bytes());
    return a;
  }
  /// std::vector overload (std::vector<bool> is not contiguous).
  static Array from_host(const std::vector<T>& values, const Shape& shape) {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(values.begin(), values.end());
      Array a(shape);
      a.check_count(bytes.size(), "from_host");
      a.copy_from_host(bytes.data(), a.bytes());
      return a;
    } else {
      return from_host(std::span<const T>(values), shape);
    }
  }
  /// A 1-D array holding `values`.
  static Array from_host(const std::vector<T>& values) {
    return from_host(values, Shape(static_cast<int64_t>(values.size())));
  }

  /// An array of `shape` with every element `value` (filled on the host, then copied).
  static Array full(const Shape& shape, T value) {
    return generate(shape, [&](int64_t) { return value; });
  }

  /// Uniform random values, the same for the same seed on every machine
  /// (generated on the host with SplitMix64, then copied): floating types in
  /// [lo, hi); integers floor() of that, so in [lo, hi) for integral bounds;
  /// bool true with probability 1/2 (lo and hi ignored).
  static Array random(const Shape& shape, uint64_t seed, double lo = 0.0, double hi = 1.0) {
    detail::SplitMix64 rng(seed);
    return generate(shape, [&](int64_t) {
      double u = rng.uniform();
      if constexpr (std::is_same_v<T, bool>)
        return u < 0.5;
      else if constexpr (std::is_integral_v<T>)
        return static_cast<T>(std::floor(lo + u * (hi - lo)));
      else
        return static_cast<T>(lo + u * (hi - lo));
    });
  }

  /// start, start + step, ... in row-major order.
  static Array arange(const Shape& shape, double start = 0.0, double step = 1.0) {
    return generate(shape, [&](int64_t i) {
      return static_cast<T>(start + step * static_cast<double>(i));
    });
  }

  /// The elements, row-major. Waits for the work that computes them.
  /// A non-contiguous view is gathered into a dense copy first.
  std::vector<T> to_host() const {
    if (!is_contiguous())
      return copy().to_host();
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(static_cast<size_t>(size()));
      copy_to_host(bytes.data(), bytes.size());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> v(static_cast<size_t>(size()));
      copy_to_host(v.data(), bytes());
      return v;
    }
  }
  /// Copies the elements into `dst` (exactly size() of them). Waits like to_host().
  void to_host(std::span<T> dst) const {
    check_count(dst.size(), "to_host");
    if (!is_contiguous())
      return copy().to_host(dst);
    copy_to_host(dst.data(), bytes());
  }

  /// The value of a one-element array (a 0-d array, such as a full
  /// reduction's result, or any shape of size 1) as a C++ scalar. Waits for
  /// the work that computes it: the name says so. Error{Shape} unless the
  /// array has exactly one element.
  T item_sync() const {
    check_count(1, "item_sync");
    return to_host()[0];
  }

  /// A new array with the same elements (and name).
  Array copy() const {
    Array a(shape());
    if (!name().empty())
      a.set_name(name());
    a = *this;
    return a;
  }

  /// Another Array on this array's buffer: writes through either are seen by both.
  Array share() { return Array(*this, detail::ShareTag{}); }

  // --- Views: no copy, the same buffer (dsl/view.hpp) ---------------------
  // Views keep the array's name. They are made from const arrays too: like
  // share(), a view writes the elements it sees.

  /// NumPy's x[s0, s1, ...]: one Slice per leading axis, the rest whole.
  ///   x.slice({Slice(1, 3)})                     // x[1:3]
  ///   x.slice({Slice::all(), Slice(0, 8, 2)})    // x[:, 0:8:2]
  Array slice(std::initializer_list<Slice> slices) const {
    return view(detail::slice_view(*this, {slices.begin(), slices.size()}));
  }
  /// One axis sliced: x.slice(1, Slice(0, 8, 2)) is x[:, 0:8:2].
  Array slice(int axis, Slice s) const { return view(detail::slice_view(*this, axis, s)); }
  /// x[..., i, ...]: axis `axis` at `index`, removed (negative counts from the end);
  /// on a 1-D array, a 0-d view of element i.
  Array select(int axis, int64_t index) const { return view(detail::select_view(*this, axis, index)); }
  /// The axes reversed (NumPy's x.T): a [R, C] array as [C, R]. Error{Shape} for 0-d.
  Array transpose() const { return view(detail::transpose_view(*this)); }
  /// The axes in the order given: x.permute({0, 2, 1}).
  Array permute(std::initializer_list<int> axes) const {
    return view(detail::permute_view(*this, {axes.begin(), axes.size()}));
  }
  /// The same elements as `shape`; Error{Shape} unless contiguous with the same size.
  Array reshape(const Shape& shape) const { return view(detail::reshape_view(*this, shape)); }
  /// A new axis of extent 1 before axis `axis` (NumPy's x[np.newaxis] / expand_dims):
  /// b.expand_dims(1) turns [R] into [R, 1], a column that broadcasts across rows.
  Array expand_dims(int axis) const { return view(detail::expand_dims_view(*this, axis)); }
  /// A read-only view of `shape`: axes of extent 1 (and missing leading ones)
  /// repeat with stride 0. Assigning into it is an error.
  Array broadcast_to(const Shape& shape) const { return view(detail::broadcast_view(*this, shape)); }

  /// Names the array in generated kernels and messages (a C identifier).
  Array& named(std::string_view name) & {
    set_name(name);
    return *this;
  }
  Array&& named(std::string_view name) && {
    set_name(name);
    return std::move(*this);
  }

private:
  Array(const Array& other, detail::ShareTag tag) : ArrayBase(other, tag) {}
  Array(const Array& other, const detail::ViewGeometry& g)
      : ArrayBase(other, detail::ShareTag{}, g.shape, g.strides, g.offset) {}
  Array view(const detail::ViewGeometry& g) const { return Array(*this, g); }

  template <typename F> static Array generate(const Shape& shape, F&& value_at) {
    Array a(shape);
    size_t n = static_cast<size_t>(shape.size());
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> host(n);
      for (size_t i = 0; i < n; ++i)
        host[i] = value_at(static_cast<int64_t>(i)) ? 1 : 0;
      a.copy_from_host(host.data(), a.bytes());
    } else {
      std::vector<T> host(n);
      for (size_t i = 0; i < n; ++i)
        host[i] = value_at(static_cast<int64_t>(i));
      a.copy_from_host(host.data(), a.bytes());
    }
    return a;
  }

  void check_count(size_t count, std::string_view what) const;
};

/// `x` broadcast to `shape` (NumPy's broadcast_to): a read-only view.
template <typename T> Array<T> broadcast_to(const Array<T>& x, const Shape& shape) {
  return x.broadcast_to(shape);
}

namespace detail {
/// Error{Shape} for a host buffer whose element count differs from the array's.
[[noreturn]] void throw_count_mismatch(std::string_view what, size_t count, const Shape& shape);
} // namespace detail

template <typename T> void Array<T>::check_count(size_t count, std::string_view what) const {
  if (count != static_cast<size_t>(size()))
    detail::throw_count_mismatch(what, count, shape());
}

} // namespace gpukit

// Array's assignment operators are defined with the kernel machinery.
#include "dsl/assign.hpp"
