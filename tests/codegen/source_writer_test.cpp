#include "codegen/source_writer.hpp"

#include "support/error.hpp"

#include <gtest/gtest.h>

namespace gpukit::codegen {
namespace {

TEST(SourceWriter, IndentsBlocks) {
  SourceWriter w;
  w.line("// header");
  w.open("void f(int n) {");
  w.open("for (int k = 0; k < {}; ++k) {{", 4);
  w.line("g(k);");
  w.line("");
  w.close();
  w.lines("a();\nb();");
  w.close("}");
  EXPECT_EQ(w.str(), "// header\n"
                     "void f(int n) {\n"
                     "  for (int k = 0; k < 4; ++k) {\n"
                     "    g(k);\n"
                     "\n"
                     "  }\n"
                     "  a();\n"
                     "  b();\n"
                     "}\n");
  EXPECT_EQ(w.depth(), 0);
}

TEST(SourceWriter, UnbalancedCloseIsAnInternalError) {
  SourceWriter w;
  EXPECT_THROW(w.close(), Error);
}

} // namespace
} // namespace gpukit::codegen
