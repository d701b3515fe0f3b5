#include "codegen/kernel_names.hpp"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>

namespace gpukit::codegen {

bool is_reserved_kernel_name(std::string_view name) {
  static constexpr std::string_view kReserved[] = {
      "auto",     "bool",      "break",    "case",      "char",      "const",    "continue",
      "default",  "delete",    "do",       "double",    "else",      "enum",     "extern",
      "false",    "float",     "for",      "goto",      "if",        "inline",   "int",
      "long",     "new",       "nullptr",  "operator",  "register",  "return",   "short",
      "signed",   "sizeof",    "static",   "struct",    "switch",    "template", "this",
      "true",     "typedef",   "typename", "union",     "unsigned",  "using",    "void",
      "volatile", "while",     "class",    "namespace", "private",   "public",   "half",
      "threadIdx", "blockIdx", "blockDim", "gridDim",   "warpSize",  "n",        "i"};
  for (std::string_view r : kReserved)
    if (name == r)
      return true;
  // Scalars are s0, s1, ...; the emitters' temporaries t0, t1, ...
  llvm::StringRef n(name.data(), name.size());
  if (n.size() >= 2 && (n[0] == 's' || n[0] == 't') &&
      n.drop_front().find_first_not_of("0123456789") == llvm::StringRef::npos)
    return true;
  // Reduction kernels: stage values are r0, r1, ... (any r<digit>...
  // scalar is read as one) and their own locals start gk_.
  if (n.size() >= 2 && n[0] == 'r' && n[1] >= '0' && n[1] <= '9')
    return true;
  return has_reserved_prefix(name);
}

bool has_reserved_prefix(std::string_view name) {
  return name.starts_with("__") || name.starts_with("gpukit") || name.starts_with("gk_");
}

std::string free_kernel_name(std::string_view name, std::string_view prefix, std::string_view suffix,
                             llvm::function_ref<bool(const std::string&)> taken) {
  bool stage_like = name.size() >= 2 && name[0] == 'r' && name[1] >= '0' && name[1] <= '9';
  std::string base = has_reserved_prefix(name) || stage_like ? fmt::format("{}{}", prefix, name) : std::string(name);
  auto busy = [&](const std::string& c) { return is_reserved_kernel_name(c) || taken(c); };
  if (!busy(base))
    return base;
  // `base` starts with no reserved prefix now, so a suffix frees it: the
  // taken names are finitely many.
  for (unsigned n = 1;; ++n) {
    std::string candidate = n == 1 ? fmt::format("{}{}", base, suffix) : fmt::format("{}{}{}", base, suffix, n);
    if (!busy(candidate))
      return candidate;
  }
}

} // namespace gpukit::codegen
