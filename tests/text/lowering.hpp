// Test helpers for the text front end's lowering: a program lowered from
// text, or the message of the error lowering it gives.
//
//   LoweredProgram lp = test::lower_text("out = 2*x");
//   EXPECT_EQ(test::lower_error("out = y +"), "t.gk:1:10: error: ...");
#pragma once

#include "dsl/text/lower.hpp"
#include "dsl/text/parser.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace gpukit::text::test {

/// `text` parsed as "t.gk" and lowered.
inline LoweredProgram lower_text(std::string_view text, const LowerOptions& opts = {}) {
  return lower(parse_program(text, "t.gk"), opts);
}

/// The message of the error lowering `text` gives (of kind `kind`), or
/// "(no error)".
inline std::string lower_error(std::string_view text, const LowerOptions& opts = {},
                               ErrorKind kind = ErrorKind::Usage) {
  try {
    lower_text(text, opts);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  return "(no error)";
}
inline std::string lower_error(std::string_view text, ErrorKind kind, const LowerOptions& opts = {}) {
  return lower_error(text, opts, kind);
}

} // namespace gpukit::text::test
