#include "dsl/array_base.hpp"

#include "dsl/array.hpp"
#include "dsl/operand_pins.hpp"

#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cctype>

namespace gpukit::detail {

Strides row_major_strides(const Shape& shape) {
  Strides strides{};
  int64_t step = 1;
  for (unsigned k = shape.rank(); k-- > 0;) {
    strides[k] = step;
    step *= shape[k];
  }
  return strides;
}

ArrayBase::ArrayBase(DType type, const Shape& shape)
    : Storage(std::make_shared<Buffer>(static_cast<size_t>(shape.size()) * size_of(type))),
      Extents(shape), Steps(row_major_strides(shape)),
      Type(type) {}

ArrayBase::ArrayBase(const ArrayBase& other, ShareTag)
    : Storage(other.Storage), Extents(other.Extents), Steps(other.Steps),
      Offset(other.Offset), Type(other.Type), Name(other.Name) {}

ArrayBase::ArrayBase(const ArrayBase& other, ShareTag, const Shape& shape, const Strides& strides,
                     int64_t offset)
    : Storage(other.Storage), Extents(shape), Steps(strides), Offset(offset), Type(other.Type),
      Name(other.Name) {}

bool ArrayBase::is_contiguous() const {
  int64_t step = 1;
  for (unsigned k = Extents.rank(); k-- > 0;) {
    if (Extents[k] == 0)
      return true;
    if (Extents[k] != 1 && Steps[k] != step)
      return false;
    step *= Extents[k];
  }
  return true;
}

bool ArrayBase::same_view_as(const ArrayBase& other) const {
  if (address() != other.address() || Type != other.Type || !(Extents == other.Extents))
    return false;
  for (unsigned k = 0; k < Extents.rank(); ++k)
    if (Extents[k] != 1 && Steps[k] != other.Steps[k])
      return false;
  return true;
}

/// The lowest and highest element a view touches, in elements from its buffer's start.
static std::pair<int64_t, int64_t> element_span(const Shape& shape, const Strides& strides,
                                                int64_t offset) {
  int64_t lo = offset, hi = offset;
  for (unsigned k = 0; k < shape.rank(); ++k) {
    int64_t reach = (shape[k] - 1) * strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

bool ArrayBase::may_overlap(const ArrayBase& other) const {
  if (!shares_buffer_with(other) || size() == 0 || other.size() == 0)
    return false;
  auto [lo, hi] = element_span(Extents, Steps, Offset);
  auto [olo, ohi] = element_span(other.Extents, other.Steps, other.Offset);
  // Different element types on one buffer: compare bytes.
  int64_t a = size_of(Type), b = size_of(other.Type);
  return lo * a < (ohi + 1) * b && olo * b < (hi + 1) * a;
}

// A moved-from array is empty ([0], no buffer) rather than unspecified, so
// using one gives a shape error that says so.
ArrayBase::ArrayBase(ArrayBase&& other) noexcept
    : Storage(std::move(other.Storage)), Extents(other.Extents), Steps(other.Steps),
      Offset(other.Offset), Type(other.Type), Name(std::move(other.Name)) {
  other.Extents = Shape();
  other.Steps = row_major_strides(other.Extents);
  other.Offset = 0;
}

ArrayBase& ArrayBase::operator=(ArrayBase&& other) noexcept {
  if (this == &other)
    return *this;
  Storage = std::move(other.Storage);
  Extents = other.Extents;
  Steps = other.Steps;
  Offset = other.Offset;
  Type = other.Type;
  Name = std::move(other.Name);
  other.Extents = Shape();
  other.Steps = row_major_strides(other.Extents);
  other.Offset = 0;
  return *this;
}

void ArrayBase::set_name(std::string_view name) {
  bool valid = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name)
    valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid)
    throw Error(ErrorKind::Usage,
                fmt::format("array name '{}' is not a C identifier (letters, digits and '_', not "
                            "starting with a digit); it names a kernel parameter",
                            name));
  Name = std::string(name);
}

/// The memory from element 0 to the end of the buffer (a contiguous view's elements).
static rt::Allocation from_element_zero(rt::Allocation whole, uint64_t address) {
  return {address, whole.bytes - static_cast<size_t>(address - whole.address)};
}

// Copies pin the buffer on the runtime's stream, where Runtime orders them.
void ArrayBase::copy_from_host(const void* src, size_t bytes) {
  if (bytes == 0)
    return;
  rt::Runtime& runtime = rt::Runtime::get();
  OperandPins pin(runtime.stream());
  pin.add(*this);
  runtime.copy_to_device(from_element_zero(allocation(), address()), src, bytes);
}

void ArrayBase::copy_to_host(void* dst, size_t bytes) const {
  if (bytes == 0)
    return;
  rt::Runtime& runtime = rt::Runtime::get();
  OperandPins pin(runtime.stream());
  pin.add(*this);
  runtime.copy_to_host(dst, from_element_zero(allocation(), address()), bytes);
}

void throw_count_mismatch(std::string_view what, size_t count, const Shape& shape) {
  throw Error(ErrorKind::Shape, fmt::format("{}: {} values for an array of shape {} ({} elements)",
                                            what, count, shape.to_string(), shape.size()));
}

} // namespace gpukit::detail
