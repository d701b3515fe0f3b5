// Test helpers for generated CUDA: split the sources of a reduction's
// kernels (inspect() and `gpukit dump` print them one after another), and
// drop the label line that names where an expression was written, so the
// C++ DSL's kernels and the text language's can be compared.
//
//   std::vector<std::string> ks = test::reduction_kernels(info.source);
//   EXPECT_EQ(test::without_label(ks[0]), test::without_label(text_ks[0]));
#pragma once

#include <string>
#include <vector>

namespace gpukit::test {

/// Each "// gpukit reduction kernel ..." source in `sources`, label included.
inline std::vector<std::string> reduction_kernels(const std::string& sources) {
  std::vector<std::string> kernels;
  const std::string marker = "// gpukit reduction kernel ";
  for (size_t at = sources.find(marker); at != std::string::npos;) {
    size_t next = sources.find(marker, at + 1);
    kernels.push_back(sources.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return kernels;
}

/// `kernel` without its first line and trailing newlines.
inline std::string without_label(std::string kernel) {
  kernel = kernel.substr(kernel.find('\n') + 1);
  while (!kernel.empty() && kernel.back() == '\n')
    kernel.pop_back();
  return kernel;
}

/// Each reduction kernel's source without its label line.
inline std::vector<std::string> reduction_kernel_bodies(const std::string& sources) {
  std::vector<std::string> bodies;
  for (std::string& k : reduction_kernels(sources))
    bodies.push_back(without_label(std::move(k)));
  return bodies;
}

} // namespace gpukit::test
