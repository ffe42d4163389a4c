#include "CallingContext.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "Symbolizer.h"

namespace fuselens::collector {
namespace {

std::uint64_t key(std::uint32_t parent, std::uintptr_t pc) {
  return (static_cast<std::uint64_t>(pc) * 0x9E3779B97F4A7C15ull) ^ parent;
}

}  // namespace

ThreadTree::ThreadTree(std::uint32_t tid) : tid_(tid) {
  nodes_.reserve(1024);
  nodes_.push_back({0, 0});
  calls_.reserve(1 << 16);
}

std::uint32_t ThreadTree::child(std::uint32_t parent, std::uintptr_t pc) {
  auto& bucket = children_[key(parent, pc)];
  for (const auto id : bucket) {
    if (nodes_[id].parent == parent && nodes_[id].pc == pc) return id;
  }
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  nodes_.push_back({parent, pc});
  bucket.push_back(id);
  return id;
}

void ThreadTree::record(std::uint32_t correlation_id, const std::uintptr_t* leaf_first, int depth) {
  depth = std::min(depth, kMaxDepth);
  // Root-first frame i is leaf_first[depth - 1 - i]. Re-use the prefix shared with the last path.
  int same = 0;
  while (same < depth && same < last_depth_ && last_path_[same] == leaf_first[depth - 1 - same]) {
    ++same;
  }
  std::uint32_t node = same == 0 ? 0 : last_nodes_[same - 1];
  for (int i = same; i < depth; ++i) {
    const std::uintptr_t pc = leaf_first[depth - 1 - i];
    node = child(node, pc);
    last_path_[i] = pc;
    last_nodes_[i] = node;
  }
  last_depth_ = depth;
  calls_.emplace_back(correlation_id, node);
}

ThreadTree& CallingContextRegistry::this_thread() {
  thread_local ThreadTree* tree = nullptr;
  if (!tree) {
    auto created = std::make_shared<ThreadTree>(static_cast<std::uint32_t>(::syscall(SYS_gettid)));
    std::lock_guard lock(mutex_);
    trees_.push_back(created);
    tree = created.get();
  }
  return *tree;
}

std::uint64_t CallingContextRegistry::recorded_calls() {
  std::lock_guard lock(mutex_);
  std::uint64_t n = 0;
  for (const auto& t : trees_) n += t->calls().size();
  return n;
}

db::CallingContextTree CallingContextRegistry::merge_and_symbolize(std::uint32_t pid) {
  std::lock_guard lock(mutex_);
  db::CallingContextTree out;
  out.pid = pid;
  out.nodes.push_back({0, 0});
  std::unordered_map<std::uintptr_t, std::uint32_t> frame_of_pc;
  std::vector<std::uintptr_t> pcs;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> children;
  for (const auto& tree : trees_) {
    std::vector<std::uint32_t> global(tree->nodes().size(), 0);
    for (std::size_t i = 1; i < tree->nodes().size(); ++i) {
      const auto& n = tree->nodes()[i];
      const std::uint32_t parent = global[n.parent];
      auto [it, fresh] = frame_of_pc.emplace(n.pc, static_cast<std::uint32_t>(pcs.size()));
      if (fresh) pcs.push_back(n.pc);
      std::uint32_t id = 0;
      for (const auto candidate : children[key(parent, n.pc)]) {
        if (out.nodes[candidate].parent == parent && out.nodes[candidate].frame == it->second) {
          id = candidate;
        }
      }
      if (id == 0) {
        id = static_cast<std::uint32_t>(out.nodes.size());
        out.nodes.push_back({parent, it->second});
        children[key(parent, n.pc)].push_back(id);
      }
      global[i] = id;
    }
    for (const auto& [correlation, node] : tree->calls()) {
      out.contexts.push_back({correlation, tree->tid(), global[node]});
    }
  }
  out.frames = symbolize(pcs);
  return out;
}

}  // namespace fuselens::collector
