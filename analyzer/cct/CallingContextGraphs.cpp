// CUDA graphs in the calling-context views: each GPU operation a graph launch ran is charged to
// the context of the call that put its node into the graph (CallingContextData.h,
// attach_graph_capture_sites; docs/calling-context.md, "CUDA graphs").
#include <string_view>
#include <unordered_map>

#include "cct/CallingContextData.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer::cct {
namespace {

// Clone links followed at most: instantiation clones once, a child graph or cuGraphClone once
// more each; a longer chain is a damaged capture (or a cycle) and gives up.
constexpr int kMaxCloneSteps = 64;

struct NodeFacts {
  std::int64_t original = 0;     // cloned from (graph_node.original_node_id)
  std::int64_t correlation = 0;  // made by this traced call
};

// True for a Python file inside the torch package (".../torch/...", "torch/..."): PyTorch's own
// frames around a replay (torch/cuda/graphs.py, torch/_inductor/cudagraph_trees.py).
bool in_torch_package(const std::string& file) {
  return file.rfind("torch/", 0) == 0 || file.find("/torch/") != std::string::npos;
}

}  // namespace

void attach_graph_capture_sites(const db::Reader& reader, const LaunchContextMap& contexts,
                                std::vector<Operation>& ops) {
  bool any = false;
  for (const auto& op : ops) any = any || op.graph_node != 0;
  if (!any) return;
  // pid -> node id -> what made it
  std::unordered_map<std::int64_t, std::unordered_map<std::int64_t, NodeFacts>> facts;
  {
    auto rows = db::graph_nodes(reader);
    while (auto r = rows.next()) {
      if (r->node_id == 0) continue;
      auto& f = facts[r->pid][r->node_id];
      if (f.original == 0) f.original = r->original_node_id;
      if (f.correlation == 0) f.correlation = r->correlation_id;
    }
  }
  if (facts.empty()) return;
  // The capture-site cct node of (pid, graph node), found once per graph node: -1 when none.
  std::unordered_map<std::int64_t, std::unordered_map<std::int64_t, std::int64_t>> site;
  auto capture_site = [&](std::int64_t pid, std::int64_t node) {
    auto& known = site[pid];
    if (const auto it = known.find(node); it != known.end()) return it->second;
    const std::int64_t first = node;
    std::int64_t found = -1;
    const auto process = facts.find(pid);
    for (int step = 0; process != facts.end() && step < kMaxCloneSteps; ++step) {
      const auto f = process->second.find(node);
      if (f == process->second.end()) break;
      // A clone's original first: a node is charged to the call that made the original, even
      // when its clone was made while another traced call was in flight.
      if (f->second.original != 0 && f->second.original != node) {
        node = f->second.original;
        continue;
      }
      if (f->second.correlation != 0) {
        const auto c = contexts.find(context_key(pid, f->second.correlation));
        if (c != contexts.end()) found = c->second.first;
      }
      break;
    }
    known.emplace(first, found);
    return found;
  };
  for (auto& op : ops) {
    if (op.graph_node == 0) continue;
    const std::int64_t node = capture_site(op.pid, op.graph_node);
    if (node < 0) continue;  // unknown: stays under its graph launch
    // The launch's thread stays the operation's tid: phases place it by its launch.
    op.at_capture_site = true;
    op.replay_node = op.node;
    op.node = node;
  }
}

std::string graph_replay_label(const std::vector<const Frame*>& replay_path) {
  const Frame* site = nullptr;
  for (auto it = replay_path.rbegin(); it != replay_path.rend() && !site; ++it) {
    if ((*it)->python && !in_torch_package((*it)->file)) site = *it;
  }
  for (auto it = replay_path.rbegin(); it != replay_path.rend() && !site; ++it) {
    if ((*it)->python) site = *it;
  }
  if (!site && !replay_path.empty()) site = replay_path.back();
  return site ? "<graph replay> " + site->label : std::string("<graph replay>");
}

}  // namespace fuselens::analyzer::cct
