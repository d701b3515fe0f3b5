// libFuzzer target: any bytes given to the .gk parser and the lowering must
// either produce a program or a gpukit::Error, never a crash, a hang or a
// leak; and a parsed program printed in canonical form must parse back to
// the same tree.
#include "dsl/text/lower.hpp"
#include "dsl/text/parser.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpukit::text;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ParsedProgram parsed;
  try {
    parsed = parse_program(text, "fuzz.gk");
  } catch (const gpukit::Error&) {
    return 0;
  }
  std::string printed = format_program(parsed);
  try {
    ParsedProgram again = parse_program(printed, "canonical.gk");
    if (!(again.statements == parsed.statements)) {
      std::fprintf(stderr, "canonical form parses differently:\n%s\n", printed.c_str());
      std::abort();
    }
  } catch (const gpukit::Error& e) {
    std::fprintf(stderr, "canonical form does not parse:\n%s\n%s\n", printed.c_str(), e.what());
    std::abort();
  }
  try {
    LowerOptions options;
    options.sizes["N"] = 16;
    lower(parsed, options);
  } catch (const gpukit::Error&) {
  }
  return 0;
}
