#include "codegen/passes/dead_code.hpp"

namespace gpukit::ir {

std::vector<bool> live_nodes(const Program& p) {
  std::vector<bool> live(p.nodes().size(), false);
  for (const Output& o : p.outputs())
    live[o.value] = true;
  // Arguments precede their users, so one backward sweep reaches everything.
  for (size_t id = p.nodes().size(); id-- > 0;)
    if (live[id])
      for (NodeId a : p.node(static_cast<NodeId>(id)).args)
        live[a] = true;
  return live;
}

Program remove_dead_nodes(const Program& p) {
  std::vector<bool> live = live_nodes(p);
  Program out = p.without_nodes();
  std::vector<NodeId> map(p.nodes().size(), 0);
  for (size_t id = 0; id < p.nodes().size(); ++id) {
    if (!live[id])
      continue;
    Node n = p.nodes()[id];
    for (NodeId& a : n.args)
      a = map[a];
    map[id] = out.append(std::move(n));
  }
  for (Output& o : out.mutable_outputs())
    o.value = map[o.value];
  return out;
}

} // namespace gpukit::ir
