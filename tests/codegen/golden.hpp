// Golden-file comparison for the codegen tests: the expected text lives in
// tests/golden/<name>; GPUKIT_UPDATE_GOLDEN=1 rewrites it from the actual.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gpukit::test {

inline std::string golden_path(const std::string& file) {
  return std::string(GPUKIT_SOURCE_DIR) + "/tests/golden/" + file;
}

inline void expect_golden(const std::string& file, const std::string& actual) {
  std::string path = golden_path(file);
  const char* update = std::getenv("GPUKIT_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << "; run the test with GPUKIT_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual)
      << "generated text differs from " << path
      << "; if the change is intended, rerun with GPUKIT_UPDATE_GOLDEN=1 and review the diff";
}

} // namespace gpukit::test
