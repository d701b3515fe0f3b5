// Kernel parameter names (codegen/kernel_names.hpp): the rule both front
// ends name operands by.
#include "codegen/kernel_names.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gpukit::codegen {
namespace {

std::string name_for(std::string_view name, const std::set<std::string>& taken = {}) {
  return free_kernel_name(name, "in_", "_in", [&](const std::string& c) { return taken.count(c) > 0; });
}

TEST(KernelNames, FreeNamesStay) {
  EXPECT_EQ(name_for("x"), "x");
  EXPECT_EQ(name_for("rate"), "rate");
  EXPECT_EQ(name_for("r"), "r");
}

TEST(KernelNames, ReservedWordsAndTakenNamesGetASuffix) {
  EXPECT_EQ(name_for("n"), "n_in");
  EXPECT_EQ(name_for("float"), "float_in");
  EXPECT_EQ(name_for("s0"), "s0_in");
  EXPECT_EQ(name_for("x", {"x"}), "x_in");
  EXPECT_EQ(name_for("x", {"x", "x_in"}), "x_in2");
}

TEST(KernelNames, PrefixesNoSuffixFreesGetOneOfTheirOwn) {
  // Stage values are r0, r1, ...; reduction kernels' identifiers gk_...
  EXPECT_EQ(name_for("r0"), "in_r0");
  EXPECT_EQ(name_for("r2d2"), "in_r2d2");
  EXPECT_EQ(name_for("gk_dst"), "in_gk_dst");
  EXPECT_EQ(name_for("__x"), "in___x");
  EXPECT_EQ(name_for("gpukit_y"), "in_gpukit_y");
  EXPECT_EQ(name_for("r0", {"in_r0"}), "in_r0_in");
  EXPECT_TRUE(is_reserved_kernel_name("r0"));
  EXPECT_FALSE(is_reserved_kernel_name("in_r0"));
}

} // namespace
} // namespace gpukit::codegen
