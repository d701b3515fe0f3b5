#include "dsl/text/lower.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <set>

namespace gpukit::text {

namespace {

std::string join_names(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

} // namespace

bool ArrayInfo::bound() const {
  for (int64_t e : extents)
    if (e < 0)
      return false;
  return true;
}

int64_t ArrayInfo::elements() const {
  int64_t n = 1;
  for (int64_t e : extents) {
    if (e < 0)
      throw Error(ErrorKind::Internal, fmt::format("elements() of unbound array '{}'", name));
    if (e != 0 && n > INT64_MAX / e)
      throw Error(ErrorKind::Shape, fmt::format("'{}' {} has more than 2^63 elements", name, describe()));
    n *= e;
  }
  return n;
}

std::string ArrayInfo::shape_string() const {
  std::string s = "[";
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k)
      s += ", ";
    s += dims[k].symbol.empty() ? fmt::format("{}", dims[k].extent) : dims[k].symbol;
  }
  return s + "]";
}

std::string ArrayInfo::describe() const {
  std::string s = fmt::format("{}{}", short_name(dtype), shape_string());
  bool symbolic = false;
  for (const Dim& d : dims)
    symbolic |= !d.symbol.empty();
  if (!symbolic || !bound())
    return s;
  s += " = [";
  for (size_t k = 0; k < extents.size(); ++k)
    s += (k ? ", " : "") + std::to_string(extents[k]);
  return s + "]";
}

int64_t LoweredProgram::elements() const {
  std::set<std::string> unbound;
  for (const auto& [name, value] : sizes)
    if (value < 0)
      unbound.insert(name);
  if (!unbound.empty()) {
    std::string flags;
    for (const std::string& n : unbound)
      flags += fmt::format(" --size {}=...", n);
    throw Error(ErrorKind::Usage,
                fmt::format("size{} {} {} not bound; give{}", unbound.size() == 1 ? "" : "s",
                            join_names(unbound), unbound.size() == 1 ? "is" : "are", flags));
  }
  return elementwise_outputs.empty() ? 0 : outputs[elementwise_outputs.front()].elements();
}

void LoweredProgram::check_scalars_bound() const {
  auto unbound = [](std::string_view name, DType type) {
    return Error(ErrorKind::Usage,
                 fmt::format("scalar '{0}' has no value; give --scalar {0}=VALUE or declare it "
                             "with one ({0}: {1} = ...)",
                             name, short_name(type)));
  };
  for (size_t k = 0; k < scalar_values.size(); ++k)
    if (!scalar_values[k])
      throw unbound(program.scalars()[k].name, program.scalars()[k].type);
  for (const LoweredReduction& r : reductions)
    for (const LoweredReduction::Scalar& s : r.scalars)
      if (!s.value)
        throw unbound(s.source, s.type);
}

} // namespace gpukit::text
