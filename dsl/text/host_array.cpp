#include "dsl/text/host_array.hpp"

#include "support/error.hpp"
#include "support/float16.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace gpukit::text {

namespace {

template <typename T> T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T> void store(std::byte* p, T v) { std::memcpy(p, &v, sizeof(T)); }

/// detail::SplitMix64 of dsl/array.hpp, repeated here so the text front end
/// (and its fuzz targets) need not include the DSL's array header; a test
/// checks both draw the same numbers.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : State(seed) {}
  double uniform() {
    uint64_t z = (State += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

private:
  uint64_t State;
};

std::string format_element(DType t, double v) {
  if (t == DType::Bool)
    return v != 0 ? "true" : "false";
  if (is_integer(t))
    return fmt::format("{}", static_cast<int64_t>(v));
  if (t == DType::Float64)
    return fmt::format("{:.6g}", v);
  return fmt::format("{:.6g}", static_cast<float>(v));
}

} // namespace

HostArray HostArray::zeros(DType dtype, std::vector<int64_t> shape) {
  HostArray a;
  a.dtype = dtype;
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e < 0 || (e != 0 && n > std::numeric_limits<int64_t>::max() / e))
      throw Error(ErrorKind::Shape, "array shape has a negative extent or too many elements");
    n *= e;
  }
  a.shape = std::move(shape);
  a.data.resize(static_cast<size_t>(n) * size_of(dtype));
  return a;
}

double HostArray::get(size_t k) const {
  const std::byte* p = data.data() + k * size_of(dtype);
  switch (dtype) {
  case DType::Bool: return load<uint8_t>(p) != 0;
  case DType::UInt8: return load<uint8_t>(p);
  case DType::Int32: return load<int32_t>(p);
  case DType::Int64: return static_cast<double>(load<int64_t>(p));
  case DType::Float16: return half::from_bits(load<uint16_t>(p));
  case DType::BFloat16: return bfloat16::from_bits(load<uint16_t>(p));
  case DType::Float32: return load<float>(p);
  case DType::Float64: return load<double>(p);
  }
  llvm_unreachable("unknown DType");
}

void HostArray::set(size_t k, double v) {
  std::byte* p = data.data() + k * size_of(dtype);
  switch (dtype) {
  case DType::Bool: store<uint8_t>(p, v != 0); return;
  case DType::UInt8: store<uint8_t>(p, static_cast<uint8_t>(v)); return;
  case DType::Int32: store<int32_t>(p, static_cast<int32_t>(v)); return;
  case DType::Int64: store<int64_t>(p, static_cast<int64_t>(v)); return;
  case DType::Float16: store<uint16_t>(p, half(static_cast<float>(v)).bits); return;
  case DType::BFloat16: store<uint16_t>(p, bfloat16(static_cast<float>(v)).bits); return;
  case DType::Float32: store<float>(p, static_cast<float>(v)); return;
  case DType::Float64: store<double>(p, v); return;
  }
  llvm_unreachable("unknown DType");
}

void HostArray::fill_random(uint64_t seed, double lo, double hi) {
  SplitMix64 rng(seed);
  size_t n = elements();
  for (size_t k = 0; k < n; ++k) {
    double u = rng.uniform();
    // The conversions Array<T>::random makes: T(lo + u * (hi - lo)), with
    // float computed in double and then rounded, integers floored.
    double v = lo + u * (hi - lo);
    switch (dtype) {
    case DType::Bool: set(k, u < 0.5); break;
    case DType::UInt8:
    case DType::Int32:
    case DType::Int64: set(k, std::floor(v)); break;
    case DType::Float16:
    case DType::BFloat16: {
      // half(double) rounds through float, as the C++ types do.
      set(k, v);
      break;
    }
    case DType::Float32:
    case DType::Float64: set(k, v); break;
    }
  }
}

std::string HostArray::shape_string() const {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k)
    s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

std::string HostArray::summary(std::string_view name, size_t first) const {
  size_t n = elements();
  std::string out = fmt::format("{}: {}{}", name, short_name(dtype), shape_string());
  if (n == 0)
    return out + "  (empty)";
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  double sum = 0;
  size_t nans = 0;
  for (size_t k = 0; k < n; ++k) {
    double v = get(k);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (nans < n)
    out += fmt::format("  min {}  max {}  mean {:.6g}", format_element(dtype, lo),
                       format_element(dtype, hi), sum / static_cast<double>(n - nans));
  if (nans)
    out += fmt::format("  nan {}", nans);
  out += "  [";
  for (size_t k = 0; k < std::min(first, n); ++k)
    out += (k ? ", " : "") + format_element(dtype, get(k));
  out += n > first ? ", ...]" : "]";
  return out;
}

} // namespace gpukit::text
