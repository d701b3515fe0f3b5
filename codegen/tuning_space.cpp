#include "codegen/tuning_space.hpp"

#include "codegen/ir_printer.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <algorithm>

namespace gpukit::codegen {

// --- Limits ---------------------------------------------------------------------

TargetLimits TargetLimits::for_arch(unsigned major, unsigned minor) {
  TargetLimits l;
  l.sm_major = major;
  l.sm_minor = minor;
  // CUDA C++ Programming Guide, "Technical Specifications per Compute
  // Capability": the consumer parts (8.6, 8.9, 12.x) have fewer threads and
  // less shared memory per SM than the data-centre ones.
  unsigned cc = major * 10 + minor;
  bool consumer = cc == 86 || cc == 89 || major == 12;
  l.max_threads_per_sm = consumer ? 1536 : 2048;
  if (consumer)
    l.shared_bytes_per_block_optin = 99 * 1024;
  else if (major >= 9)
    l.shared_bytes_per_block_optin = 227 * 1024;
  else
    l.shared_bytes_per_block_optin = 163 * 1024;
  return l;
}

// --- TuningConfig ---------------------------------------------------------------

TuningConfig::TuningConfig(std::initializer_list<std::pair<std::string, int64_t>> values) {
  for (const auto& [name, value] : values)
    set(name, value);
}

TuningConfig& TuningConfig::set(std::string_view name, int64_t value) {
  for (auto& [n, v] : Values) {
    if (n == name) {
      v = value;
      return *this;
    }
  }
  Values.emplace_back(std::string(name), value);
  return *this;
}

std::optional<int64_t> TuningConfig::get(std::string_view name) const {
  for (const auto& [n, v] : Values)
    if (n == name)
      return v;
  return std::nullopt;
}

int64_t TuningConfig::at(std::string_view name) const {
  if (std::optional<int64_t> v = get(name))
    return *v;
  throw Error(ErrorKind::Internal,
              fmt::format("tuning configuration `{}` has no value for '{}'", to_string(), name));
}

std::map<std::string, int64_t> TuningConfig::to_map() const {
  return std::map<std::string, int64_t>(Values.begin(), Values.end());
}

std::string TuningConfig::to_string() const {
  std::string s;
  for (const auto& [n, v] : Values)
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", n, v);
  return s;
}

// --- TuningSpace ----------------------------------------------------------------

TuningSpace::TuningSpace(std::string family, unsigned version)
    : Family(std::move(family)), Version(version) {}

std::string TuningSpace::id() const { return fmt::format("{}/{}", Family, Version); }

TuningSpace& TuningSpace::add_dimension(TuningDimension dimension) {
  if (dimension.values.empty() || this->dimension(dimension.name))
    throw Error(ErrorKind::Internal,
                fmt::format("tuning space {}: dimension '{}' is empty or declared twice", id(),
                            dimension.name));
  Dimensions.push_back(std::move(dimension));
  return *this;
}

TuningSpace& TuningSpace::add_constraint(std::string name, Check check) {
  Constraints.emplace_back(std::move(name), std::move(check));
  return *this;
}

TuningSpace& TuningSpace::set_default(TuningConfig config) {
  if (!contains(config))
    throw Error(ErrorKind::Internal,
                fmt::format("tuning space {}: the default `{}` is not a point of the space", id(),
                            config.to_string()));
  // In dimension order, whatever order the caller set the values in.
  TuningConfig ordered;
  for (const TuningDimension& d : Dimensions)
    ordered.set(d.name, config.at(d.name));
  Default = std::move(ordered);
  return *this;
}

const TuningDimension* TuningSpace::dimension(std::string_view name) const {
  for (const TuningDimension& d : Dimensions)
    if (d.name == name)
      return &d;
  return nullptr;
}

uint64_t TuningSpace::size() const {
  uint64_t n = 1;
  for (const TuningDimension& d : Dimensions)
    n *= d.values.size();
  return n;
}

bool TuningSpace::contains(const TuningConfig& config) const {
  if (config.values().size() != Dimensions.size())
    return false;
  for (const TuningDimension& d : Dimensions) {
    std::optional<int64_t> v = config.get(d.name);
    if (!v || !llvm::is_contained(d.values, *v))
      return false;
  }
  return true;
}

std::optional<PrunedConfig> TuningSpace::check(const TuningConfig& config) const {
  for (const auto& [name, check] : Constraints)
    if (std::optional<std::string> reason = check(config))
      return PrunedConfig{config, name, std::move(*reason)};
  return std::nullopt;
}

TuningSpace::Enumeration TuningSpace::enumerate() const {
  if (!contains(Default))
    throw Error(ErrorKind::Internal,
                fmt::format("tuning space {}: the default `{}` does not name every dimension; call "
                            "set_default after the last add_dimension",
                            id(), Default.to_string()));
  Enumeration e;
  // The default always runs: it is what is used without tuning, and the
  // baseline every candidate is verified and timed against.
  e.candidates.push_back(Default);
  std::vector<size_t> index(Dimensions.size(), 0);
  for (uint64_t point = 0, total = size(); point < total; ++point) {
    TuningConfig c;
    for (size_t d = 0; d < Dimensions.size(); ++d)
      c.set(Dimensions[d].name, Dimensions[d].values[index[d]]);
    if (!(c == Default)) {
      if (std::optional<PrunedConfig> p = check(c))
        e.pruned.push_back(std::move(*p));
      else
        e.candidates.push_back(std::move(c));
    }
    for (size_t d = Dimensions.size(); d-- > 0;) {
      if (++index[d] < Dimensions[d].values.size())
        break;
      index[d] = 0;
    }
  }
  return e;
}

TuningConfig TuningSpace::compile_part(const TuningConfig& config) const {
  TuningConfig c;
  for (const TuningDimension& d : Dimensions)
    if (!d.launch_only)
      if (std::optional<int64_t> v = config.get(d.name))
        c.set(d.name, *v);
  return c;
}

TuningConfig TuningSpace::with_launch_of(const TuningConfig& config, const TuningConfig& launch) const {
  TuningConfig c;
  for (const TuningDimension& d : Dimensions)
    if (std::optional<int64_t> v = (d.launch_only ? launch : config).get(d.name))
      c.set(d.name, *v);
  return c;
}

std::string TuningSpace::describe(const TuningConfig& config) const {
  std::string s;
  for (const auto& [name, value] : config.values()) {
    const TuningDimension* d = dimension(name);
    std::string text = d && d->format ? d->format(value) : fmt::format("{}", value);
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", name, text);
  }
  return s;
}

uint64_t tuning_hash(const ir::Program& p) {
  // Rebuild with canonical names: leaves first, then every other node with
  // its operands re-pointed, so the text differs only where the computation does.
  ir::Program q;
  for (const ir::UserFunction& fn : p.functions())
    q.add_function(fn);
  std::vector<ir::NodeId> input_node, scalar_node;
  for (size_t k = 0; k < p.inputs().size(); ++k)
    input_node.push_back(q.add_input(fmt::format("in{}", k), p.inputs()[k].type));
  for (size_t k = 0; k < p.scalars().size(); ++k)
    scalar_node.push_back(
        q.add_scalar(fmt::format("s{}", k), p.scalars()[k].type, p.scalars()[k].weak));
  std::vector<ir::NodeId> map(p.nodes().size());
  for (ir::NodeId id = 0; id < p.nodes().size(); ++id) {
    const ir::Node& n = p.node(id);
    if (n.op == ir::Op::Input) {
      map[id] = input_node[n.index];
    } else if (n.op == ir::Op::Scalar) {
      map[id] = scalar_node[n.index];
    } else {
      ir::Node copy = n;
      for (ir::NodeId& a : copy.args)
        a = map[a];
      map[id] = q.append(std::move(copy));
    }
  }
  for (size_t k = 0; k < p.outputs().size(); ++k)
    q.add_output(fmt::format("out{}", k), p.outputs()[k].type, map[p.outputs()[k].value]);
  return ir::structural_hash(q);
}

} // namespace gpukit::codegen
