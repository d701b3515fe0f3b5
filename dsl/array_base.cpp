#include "dsl/array_base.hpp"

#include "dsl/array.hpp"

#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cctype>

namespace gpukit::detail {

ArrayBase::ArrayBase(DType type, const Shape& shape)
    : Storage(std::make_shared<Buffer>(static_cast<size_t>(shape.size()) * size_of(type))),
      Address(Storage->allocation().address), Extents(shape), Type(type) {}

ArrayBase::ArrayBase(const ArrayBase& other, ShareTag)
    : Storage(other.Storage), Address(other.Address), Extents(other.Extents), Type(other.Type),
      Name(other.Name) {}

// A moved-from array is empty ([0], no buffer) rather than unspecified, so
// using one gives a shape error that says so.
ArrayBase::ArrayBase(ArrayBase&& other) noexcept
    : Storage(std::move(other.Storage)), Address(other.Address), Extents(other.Extents),
      Type(other.Type), Name(std::move(other.Name)) {
  other.Address = 0;
  other.Extents = Shape();
}

ArrayBase& ArrayBase::operator=(ArrayBase&& other) noexcept {
  if (this == &other)
    return *this;
  Storage = std::move(other.Storage);
  Address = other.Address;
  Extents = other.Extents;
  Type = other.Type;
  Name = std::move(other.Name);
  other.Address = 0;
  other.Extents = Shape();
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

void ArrayBase::copy_from_host(const void* src, size_t bytes) {
  if (bytes == 0)
    return;
  rt::Runtime::get().copy_to_device(allocation(), src, bytes);
}

void ArrayBase::copy_to_host(void* dst, size_t bytes) const {
  if (bytes == 0)
    return;
  rt::Runtime::get().copy_to_host(dst, allocation(), bytes);
}

void throw_count_mismatch(std::string_view what, size_t count, const Shape& shape) {
  throw Error(ErrorKind::Shape, fmt::format("{}: {} values for an array of shape {} ({} elements)",
                                            what, count, shape.to_string(), shape.size()));
}

} // namespace gpukit::detail
