#include "codegen/passes/cse.hpp"

#include <bit>
#include <map>
#include <tuple>
#include <vector>

namespace gpukit::ir {

namespace {

/// Everything that makes two nodes compute the same value. An ordered map
/// keeps the pass deterministic without hashing pointers.
using NodeKey = std::tuple<Op, DType, bool, uint32_t, DType, int64_t, uint64_t, std::vector<NodeId>>;

NodeKey key_of(const Node& n) {
  return {n.op,
          n.type,
          n.typed,
          n.index,
          n.value.type,
          n.value.i,
          std::bit_cast<uint64_t>(n.value.f),
          std::vector<NodeId>(n.args.begin(), n.args.end())};
}

} // namespace

Program eliminate_common_subexpressions(const Program& p) {
  Program out = p.without_nodes();
  std::map<NodeKey, NodeId> seen;
  std::vector<NodeId> map;
  map.reserve(p.nodes().size());
  for (const Node& original : p.nodes()) {
    Node n = original;
    for (NodeId& a : n.args)
      a = map[a];
    NodeKey key = key_of(n);
    auto it = seen.find(key);
    if (it != seen.end()) {
      map.push_back(it->second);
      continue;
    }
    NodeId id = out.append(std::move(n));
    seen.emplace(std::move(key), id);
    map.push_back(id);
  }
  for (Output& o : out.mutable_outputs())
    o.value = map[o.value];
  return out;
}

} // namespace gpukit::ir
