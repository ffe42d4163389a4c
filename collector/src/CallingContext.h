#pragma once
// Calling-context capture: at the entry of every launch, copy, memset, allocation and
// synchronization API call (CUPTI driver API callbacks, which the runtime's calls go through),
// the collector records the calling thread's native stack and, when the thread runs Python code,
// its Python frames, and interns the path into that thread's calling context tree
// (ContextCapture.h says how the stack is obtained).
//
// The launch path takes no lock and, once a thread's tree holds its call paths, allocates
// nothing: each thread owns its tree (ThreadTree), and a path is compared with the thread's
// previous one so that a loop launching from one call site re-uses the whole path in O(depth)
// compares. A path is the native return addresses, root first, then the Python frame values
// (PythonFrames.h), root first. The trees are merged, Python frames spliced in place of the
// interpreter's native frames (PythonSplice.h) and native frames symbolized once, when the
// process ends (merge_and_symbolize), not on the launch path.

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "StackCache.h"
#include "fuselens/db/Records.h"

namespace fuselens::collector {

class PythonFrames;

/// One thread's calling context tree, written only by its thread.
class ThreadTree {
 public:
  using Value = std::uint64_t;  ///< a native return address, or a Python frame value
  static constexpr int kMaxDepth = 128;

  explicit ThreadTree(std::uint32_t tid);

  /// Interns a native path given leaf first (as unw_backtrace returns it) and records that the
  /// API call `correlation_id` was made from it.
  void record(std::uint32_t correlation_id, const std::uintptr_t* leaf_first, int depth);
  /// Interns a native path given leaf first under the root; returns its node. Re-uses the prefix
  /// shared with the previous native path of this thread.
  std::uint32_t intern_native(const std::uintptr_t* leaf_first, int depth);
  /// Interns `depth` values given leaf first under `base`; returns the leaf node. Re-uses the
  /// prefix shared with the previous suffix interned under the same base, remembered per base
  /// (for up to kMaxSuffixBases bases, then one shared last suffix): a PyTorch op's launches come
  /// from the same Python stack under the same native node step after step, so a repeated call
  /// matches its whole suffix with `depth` compares and no tree lookup, where one shared last
  /// suffix was lost at every change of op (920 ns a call on the CNN step of
  /// docs/pytorch-step-budget.md). `created` is set when a node was added.
  std::uint32_t intern_suffix(std::uint32_t base, const Value* leaf_first, int depth,
                              bool* created);
  /// Records that the API call `correlation_id` was made from `node`, with the thread's autograd
  /// sequence value (TorchAutograd::read; -1 for none).
  void add_call(std::uint32_t correlation_id, std::uint32_t node, std::int64_t seq = -1) {
    calls_.push_back({correlation_id, node, seq});
  }
  struct Call {
    std::uint32_t correlation_id, node;
    std::int64_t seq;  ///< TorchAutograd::read's encoding
  };
  /// Records a CUDA graph node made on this thread: created by the traced call of
  /// `node.correlation_id`, or cloned from `node.original_node_id` (db::CallingContextTree).
  /// Graph nodes are made at capture or construction time, not per replay.
  void add_graph_node(const db::CallingContextTree::GraphNode& node) {
    graph_nodes_.push_back(node);
  }
  const std::vector<db::CallingContextTree::GraphNode>& graph_nodes() const { return graph_nodes_; }

  struct Node {
    std::uint32_t parent;
    Value value;  ///< return address or Python frame value; 0 for the root
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Call>& calls() const { return calls_; }
  std::uint32_t tid() const { return tid_; }

  /// What the Python frame values of this thread name, filled at first sight.
  bool knows_python_frame(Value value) const { return python_frames_.count(value) != 0; }
  void set_python_frame(Value value, db::FrameInfo frame) {
    python_frames_[value] = std::move(frame);
  }
  const std::unordered_map<Value, db::FrameInfo>& python_frames() const { return python_frames_; }

  StackCache& stack_cache() { return stack_cache_; }
  const StackCache& stack_cache() const { return stack_cache_; }

 private:
  struct LastPath {
    Value values[kMaxDepth] = {};  // root first
    std::uint32_t nodes[kMaxDepth] = {};
    int depth = 0;
  };
  std::uint32_t child(std::uint32_t parent, Value value);
  template <typename ValueAt>
  std::uint32_t intern(std::uint32_t base, LastPath& last, int depth, ValueAt value_at,
                       bool* created);

  std::uint32_t tid_;
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>>
      children_;  // by hash(parent, value)
  std::vector<Call> calls_;
  std::vector<db::CallingContextTree::GraphNode> graph_nodes_;
  LastPath last_native_;
  static constexpr std::size_t kMaxSuffixBases = 1024;  // about 1.5 KiB each
  std::unordered_map<std::uint32_t, std::unique_ptr<LastPath>> suffix_by_base_;
  LastPath last_suffix_;  // beyond kMaxSuffixBases bases
  std::uint32_t last_suffix_base_ = UINT32_MAX;
  std::unordered_map<Value, db::FrameInfo> python_frames_;
  StackCache stack_cache_;
};

/// Every thread's tree, for the merge at the end.
class CallingContextRegistry {
 public:
  CallingContextRegistry();
  /// The calling thread's tree, created (once per thread, under a lock) on first use.
  ThreadTree& this_thread();
  /// Merges all threads' trees into one process tree, splices each path's Python frames in place
  /// of its native frames inside the interpreter (when `python` is given), symbolizes each
  /// distinct return address (module, demangled function, file and line where debug
  /// information exists) and returns the tree with every thread's graph nodes. Call once, when
  /// no API call is in flight.
  db::CallingContextTree merge_and_symbolize(std::uint32_t pid,
                                             const PythonFrames* python = nullptr);
  /// API calls recorded so far, over all threads.
  std::uint64_t recorded_calls();
  /// Stack-cache hits and misses so far, over all threads.
  std::pair<std::uint64_t, std::uint64_t> stack_cache_counts();

 private:
  std::uint64_t id_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<ThreadTree>> trees_;
};

}  // namespace fuselens::collector
