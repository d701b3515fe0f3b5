// HostArray: an array of any GPUkit element type in host memory, with its
// shape: what the CLI reads from .npy files, fills with random values,
// hands to a kernel and summarises.
//
//   HostArray a = HostArray::zeros(DType::Float32, {1000});
//   a.fill_random(/*seed=*/1, 0.0, 1.0);        // as Array<float>::random(..., 1)
//   fmt::print("{}\n", a.summary("out"));     // out: f32[1000]  min ... max ... mean ...
//
// Elements are stored little-endian in C order, bool as one byte 0/1,
// float16/bfloat16 as their 16-bit patterns (support/float16.hpp).
#pragma once

#include "codegen/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpukit::text {

struct HostArray {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;

  static HostArray zeros(DType dtype, std::vector<int64_t> shape);

  size_t elements() const { return size_of(dtype) ? data.size() / size_of(dtype) : 0; }
  /// Element k as a double (exact for every type but i64 beyond 2^53).
  double get(size_t k) const;
  void set(size_t k, double value);

  /// Uniform values in [lo, hi) drawn exactly as Array<T>::random(shape,
  /// seed, lo, hi) draws them (SplitMix64; integers floored; bool u < 0.5),
  /// so a text program and its C++ twin see the same inputs.
  void fill_random(uint64_t seed, double lo, double hi);

  /// "[1000]", "[10, 20]".
  std::string shape_string() const;
  /// One line: name, type and shape, min, max, mean (NaNs counted apart)
  /// and the first elements.
  std::string summary(std::string_view name, size_t first = 6) const;
};

} // namespace gpukit::text
