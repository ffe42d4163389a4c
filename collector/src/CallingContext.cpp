#include "CallingContext.h"

#include "TorchAutograd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <tuple>

#include "PythonFrames.h"
#include "PythonSplice.h"
#include "Symbolizer.h"

namespace fuselens::collector {
namespace {

std::uint64_t key(std::uint32_t parent, std::uint64_t value) {
  return (value * 0x9E3779B97F4A7C15ull) ^ parent;
}

std::atomic<std::uint64_t> g_next_registry{1};

}  // namespace

ThreadTree::ThreadTree(std::uint32_t tid) : tid_(tid) {
  stack_cache_.set_stack_bounds_of_this_thread();  // trees are made by the thread they belong to
  nodes_.reserve(1024);
  nodes_.push_back({0, 0});
  calls_.reserve(1 << 16);
}

std::uint32_t ThreadTree::child(std::uint32_t parent, Value value) {
  auto& bucket = children_[key(parent, value)];
  for (const auto id : bucket) {
    if (nodes_[id].parent == parent && nodes_[id].value == value) return id;
  }
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  nodes_.push_back({parent, value});
  bucket.push_back(id);
  return id;
}

template <typename ValueAt>
std::uint32_t ThreadTree::intern(std::uint32_t base, LastPath& last, int depth, ValueAt value_at,
                                 bool* created) {
  depth = std::clamp(depth, 0, kMaxDepth);
  // Re-use the prefix shared with the last path interned from the same base.
  int same = 0;
  while (same < depth && same < last.depth && last.values[same] == value_at(same)) ++same;
  std::uint32_t node = same == 0 ? base : last.nodes[same - 1];
  const std::size_t before = nodes_.size();
  for (int i = same; i < depth; ++i) {
    const Value value = value_at(i);
    node = child(node, value);
    last.values[i] = value;
    last.nodes[i] = node;
  }
  last.depth = depth;
  if (created) *created = nodes_.size() != before;
  return node;
}

std::uint32_t ThreadTree::intern_native(const std::uintptr_t* leaf_first, int depth) {
  depth = std::clamp(depth, 0, kMaxDepth);
  return intern(
      0, last_native_, depth, [&](int i) { return Value{leaf_first[depth - 1 - i]}; }, nullptr);
}

std::uint32_t ThreadTree::intern_suffix(std::uint32_t base, const Value* leaf_first, int depth,
                                        bool* created) {
  depth = std::clamp(depth, 0, kMaxDepth);
  LastPath* last = nullptr;
  if (const auto it = suffix_by_base_.find(base); it != suffix_by_base_.end()) {
    last = it->second.get();
  } else if (suffix_by_base_.size() < kMaxSuffixBases) {
    last = suffix_by_base_.emplace(base, std::make_unique<LastPath>()).first->second.get();
  } else {
    if (base != last_suffix_base_) {
      last_suffix_.depth = 0;
      last_suffix_base_ = base;
    }
    last = &last_suffix_;
  }
  return intern(
      base, *last, depth, [&](int i) { return leaf_first[depth - 1 - i]; }, created);
}

void ThreadTree::record(std::uint32_t correlation_id, const std::uintptr_t* leaf_first, int depth) {
  add_call(correlation_id, intern_native(leaf_first, depth));
}

CallingContextRegistry::CallingContextRegistry() : id_(g_next_registry.fetch_add(1)) {}

ThreadTree& CallingContextRegistry::this_thread() {
  // One cached tree per thread, for the registry that made it (tests make several registries).
  thread_local std::uint64_t owner = 0;
  thread_local ThreadTree* tree = nullptr;
  if (owner != id_ || !tree) {
    auto created = std::make_shared<ThreadTree>(static_cast<std::uint32_t>(::syscall(SYS_gettid)));
    std::lock_guard lock(mutex_);
    trees_.push_back(created);
    tree = created.get();
    owner = id_;
  }
  return *tree;
}

std::uint64_t CallingContextRegistry::recorded_calls() {
  std::lock_guard lock(mutex_);
  std::uint64_t n = 0;
  for (const auto& t : trees_) n += t->calls().size();
  return n;
}

std::pair<std::uint64_t, std::uint64_t> CallingContextRegistry::stack_cache_counts() {
  std::lock_guard lock(mutex_);
  std::pair<std::uint64_t, std::uint64_t> out{0, 0};
  for (const auto& t : trees_) {
    out.first += t->stack_cache().hits();
    out.second += t->stack_cache().misses();
  }
  return out;
}

db::CallingContextTree CallingContextRegistry::merge_and_symbolize(std::uint32_t pid,
                                                                   const PythonFrames* python) {
  std::lock_guard lock(mutex_);
  db::CallingContextTree out;
  out.pid = pid;
  out.nodes.push_back({0, 0});
  // Frames: native ones by return address (symbolized at the end), Python ones by what they name.
  std::unordered_map<std::uintptr_t, std::uint32_t> frame_of_pc;
  std::vector<std::pair<std::uint32_t, std::uintptr_t>> to_symbolize;  // frame index, address
  std::map<std::tuple<std::string, std::string, std::uint32_t, std::uint64_t>, std::uint32_t>
      frame_of_python;  // file, function, line, module address (module frames)
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> children;
  auto native_frame = [&](std::uintptr_t pc) {
    auto [it, fresh] = frame_of_pc.emplace(pc, static_cast<std::uint32_t>(out.frames.size()));
    if (fresh) {
      out.frames.emplace_back();
      to_symbolize.emplace_back(it->second, pc);
    }
    return it->second;
  };
  auto python_frame = [&](const db::FrameInfo& f) {
    auto [it, fresh] =
        frame_of_python.emplace(std::make_tuple(f.file, f.function, f.line, f.module_offset),
                                static_cast<std::uint32_t>(out.frames.size()));
    if (fresh) out.frames.push_back(f);
    return it->second;
  };
  auto out_child = [&](std::uint32_t parent, std::uint32_t frame) {
    auto& bucket = children[key(parent, frame)];
    for (const auto candidate : bucket) {
      if (out.nodes[candidate].parent == parent && out.nodes[candidate].frame == frame)
        return candidate;
    }
    const auto id = static_cast<std::uint32_t>(out.nodes.size());
    out.nodes.push_back({parent, frame});
    bucket.push_back(id);
    return id;
  };

  std::vector<ThreadTree::Value> path;
  std::vector<std::uintptr_t> native;
  std::vector<ThreadTree::Value> py;
  std::vector<bool> in_interpreter;
  for (const auto& tree : trees_) {
    const auto& nodes = tree->nodes();
    std::vector<std::uint32_t> merged(nodes.size(), UINT32_MAX);
    merged[0] = 0;
    auto merge_node = [&](std::uint32_t node) {
      if (merged[node] != UINT32_MAX) return merged[node];
      path.clear();
      for (std::uint32_t n = node; n != 0; n = nodes[n].parent) path.push_back(nodes[n].value);
      std::reverse(path.begin(), path.end());
      native.clear();
      py.clear();
      for (const auto value : path) {
        if (is_python_value(value)) {
          py.push_back(value);
        } else {
          native.push_back(static_cast<std::uintptr_t>(value));
        }
      }
      in_interpreter.assign(native.size(), false);
      if (python && !py.empty()) {
        for (std::size_t i = 0; i < native.size(); ++i)
          in_interpreter[i] = python->in_interpreter(native[i]);
      }
      std::uint32_t at = 0;
      for (const auto& step : splice_python_frames(in_interpreter, py.size())) {
        std::uint32_t frame = 0;
        if (step.python) {
          const auto found = tree->python_frames().find(py[step.index]);
          db::FrameInfo f;
          if (found != tree->python_frames().end()) f = found->second;
          if (f.kind != db::FrameKind::Module) f.kind = db::FrameKind::Python;
          if (f.function.empty()) f.function = "<python>";
          frame = python_frame(f);
        } else {
          frame = native_frame(native[step.index]);
        }
        at = out_child(at, frame);
      }
      merged[node] = at;
      return at;
    };
    for (const auto& call : tree->calls()) {
      db::CallingContextTree::Context c{call.correlation_id, tree->tid(), merge_node(call.node)};
      if (call.seq >= 0) {
        const bool backward = (call.seq & TorchAutograd::kBackwardBit) != 0;
        (backward ? c.backward_seq : c.forward_seq) = call.seq & ~TorchAutograd::kBackwardBit;
      }
      out.contexts.push_back(c);
    }
    out.graph_nodes.insert(out.graph_nodes.end(), tree->graph_nodes().begin(),
                           tree->graph_nodes().end());
  }
  std::vector<std::uintptr_t> pcs;
  pcs.reserve(to_symbolize.size());
  for (const auto& [index, pc] : to_symbolize) pcs.push_back(pc);
  auto symbols = symbolize(pcs);
  for (std::size_t i = 0; i < to_symbolize.size() && i < symbols.size(); ++i) {
    out.frames[to_symbolize[i].first] = std::move(symbols[i]);
  }
  return out;
}

}  // namespace fuselens::collector
