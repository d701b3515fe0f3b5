// The DSL's compile-time errors: misuse must fail to compile with a
// static_assert message a user can act on. Each snippet is compiled with the
// flags this test itself was built with (from compile_commands.json in the
// build tree) and the compiler's output must contain the message.
#include <gtest/gtest.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

/// The compile command of a file in tests/error, without its -o and -c
/// parts; nullopt when the build tree has no compile_commands.json.
std::optional<std::string> compile_command() {
  auto buffer = llvm::MemoryBuffer::getFile(GPUKIT_BINARY_DIR "/compile_commands.json");
  if (!buffer)
    return std::nullopt;
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return std::nullopt;
  }
  for (const llvm::json::Value& entry : *json->getAsArray()) {
    const llvm::json::Object* o = entry.getAsObject();
    auto file = o->getString("file");
    auto command = o->getString("command");
    if (!file || !command || !file->contains("tests/error/static_assert_test.cpp"))
      continue;
    llvm::SmallVector<llvm::StringRef, 64> words;
    command->split(words, ' ', -1, false);
    std::string kept;
    for (size_t k = 0; k < words.size(); ++k) {
      if (words[k] == "-o" || words[k] == "-c") {
        ++k;
        continue;
      }
      kept += words[k].str() + " ";
    }
    return kept;
  }
  return std::nullopt;
}

/// Compiles `body` after `#include "dsl/gpukit.hpp"`; returns the
/// compiler's output, or nullopt if it compiled.
std::optional<std::string> compile_errors(const std::string& body) {
  static const std::optional<std::string> command = compile_command();
  if (!command)
    return std::string("(no compile_commands.json)");
  llvm::SmallString<128> source, log;
  llvm::sys::fs::createTemporaryFile("gpukit-static-assert", "cpp", source);
  llvm::sys::fs::createTemporaryFile("gpukit-static-assert", "log", log);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(source, ec);
    out << "#include \"dsl/gpukit.hpp\"\nusing namespace gpukit;\n" << body << "\n";
  }
  std::string shell = *command + "-fsyntax-only " + std::string(source) + " > " +
                      std::string(log) + " 2>&1";
  int status = std::system(shell.c_str());
  auto output = llvm::MemoryBuffer::getFile(log);
  std::string text = output ? (*output)->getBuffer().str() : "";
  llvm::sys::fs::remove(source);
  llvm::sys::fs::remove(log);
  if (status == 0)
    return std::nullopt;
  return text;
}

void expect_compile_error(const std::string& body, const std::string& message) {
  std::optional<std::string> errors = compile_errors(body);
  ASSERT_TRUE(errors.has_value()) << "compiled, but should fail with: " << message;
  if (*errors == "(no compile_commands.json)")
    GTEST_SKIP() << "no compile_commands.json in " GPUKIT_BINARY_DIR;
  EXPECT_NE(errors->find(message), std::string::npos) << *errors;
}

TEST(StaticAssert, TheSnippetHarnessCompilesValidCode) {
  if (compile_errors("int main() {}") == std::string("(no compile_commands.json)"))
    GTEST_SKIP() << "no compile_commands.json in " GPUKIT_BINARY_DIR;
  EXPECT_EQ(compile_errors("void f(Array<float>& o, const Array<half>& x) { o = 2 * x + 1.5; }"),
            std::nullopt);
}

TEST(StaticAssert, OperandThatIsNotANumber) {
  expect_compile_error(
      "#include <string>\nvoid f(const Array<float>& x) { auto e = x + std::string(\"a\"); }",
      "gpukit: operands of an array expression must be gpukit::Array<T>, array expressions or C++ "
      "arithmetic scalars");
}

TEST(StaticAssert, UnsupportedElementType) {
  expect_compile_error("Array<char> a;",
                       "gpukit::Array<T>: T must be one of float, double, gpukit::half, "
                       "gpukit::bfloat16, int32_t, int64_t, uint8_t or bool");
}

TEST(StaticAssert, CastToUnsupportedType) {
  expect_compile_error("void f(const Array<float>& x) { auto e = cast<unsigned short>(x); }",
                       "gpukit::cast<T>: T must be one of float, double, gpukit::half");
}

TEST(StaticAssert, AssigningSomethingElse) {
  expect_compile_error("#include <string>\nvoid f(Array<float>& o) { o = std::string(\"a\"); }",
                       "gpukit: the right-hand side of an assignment to an Array must be an array "
                       "expression, a gpukit::Array or a C++ arithmetic scalar");
}

TEST(StaticAssert, DeviceFunctionOfAnUnsupportedType) {
  expect_compile_error("GPUKIT_DEVICE_FUNCTION(float, f, (short, x), { return x; });",
                       "GPUKIT_DEVICE_FUNCTION: parameter and result types must be float, double, "
                       "int32_t, int64_t, uint8_t or bool");
}

TEST(StaticAssert, RawKernelArgumentOfAnUnsupportedType) {
  expect_compile_error(
      "#include <string>\nvoid f(RawKernel& k) { k.launch(1, 1, std::string(\"a\")); }",
      "RawKernel::launch: arguments must be gpukit::Array<T> (passed as a device pointer) or C++ "
      "arithmetic scalars (passed by value)");
}

} // namespace
