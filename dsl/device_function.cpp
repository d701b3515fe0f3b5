#include "dsl/device_function.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit::detail {

std::string device_function_body(std::string_view braced) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!braced.empty() && is_space(braced.front()))
    braced.remove_prefix(1);
  while (!braced.empty() && is_space(braced.back()))
    braced.remove_suffix(1);
  if (braced.size() < 2 || braced.front() != '{' || braced.back() != '}')
    throw Error(ErrorKind::Usage,
                fmt::format("GPUKIT_DEVICE_FUNCTION: the body must be in braces, e.g. "
                            "{{ return x * x; }}; given: {}",
                            braced));
  braced = braced.substr(1, braced.size() - 2);
  while (!braced.empty() && is_space(braced.front()))
    braced.remove_prefix(1);
  while (!braced.empty() && is_space(braced.back()))
    braced.remove_suffix(1);
  return std::string(braced);
}

} // namespace gpukit::detail
