#pragma once
// Calling-context capture: at the entry of every launch, copy, memset, allocation and
// synchronization API call (CUPTI runtime and driver API callbacks), the collector unwinds the
// calling thread's native stack and interns the path into that thread's calling context tree.
//
// The launch path takes no lock and, once a thread's tree holds its call paths, allocates
// nothing: each thread owns its tree (ThreadTree), the unwind is libunwind's unw_backtrace
// (DWARF CFI, so it walks through NVIDIA's libraries that keep no frame pointers), and a path is
// compared with the thread's previous one so that a loop launching from one call site re-uses the
// whole path in O(depth) compares. The trees are merged and symbolized once, when the process
// ends (merge_and_symbolize), not on the launch path.

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "fuselens/db/Records.h"

namespace fuselens::collector {

/// One thread's calling context tree, written only by its thread.
class ThreadTree {
 public:
  static constexpr int kMaxDepth = 128;

  explicit ThreadTree(std::uint32_t tid);

  /// Interns a path given leaf first (as unw_backtrace returns it) and records that the API
  /// call `correlation_id` was made from it.
  void record(std::uint32_t correlation_id, const std::uintptr_t* leaf_first, int depth);

  struct Node {
    std::uint32_t parent;
    std::uintptr_t pc;  ///< return address; 0 for the root
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& calls() const { return calls_; }
  std::uint32_t tid() const { return tid_; }

 private:
  std::uint32_t child(std::uint32_t parent, std::uintptr_t pc);

  std::uint32_t tid_;
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> children_;  // by hash(parent, pc)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> calls_;              // correlation, node
  std::uintptr_t last_path_[kMaxDepth] = {};   // root first
  std::uint32_t last_nodes_[kMaxDepth] = {};
  int last_depth_ = 0;
};

/// Every thread's tree, for the merge at the end.
class CallingContextRegistry {
 public:
  /// The calling thread's tree, created (once per thread, under a lock) on first use.
  ThreadTree& this_thread();
  /// Merges all threads' trees into one process tree, symbolizes each distinct return address
  /// (module, demangled function, file and line where debug information exists) and returns it.
  /// Call once, when no API call is in flight.
  db::CallingContextTree merge_and_symbolize(std::uint32_t pid);
  /// API calls recorded so far, over all threads.
  std::uint64_t recorded_calls();

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<ThreadTree>> trees_;
};

}  // namespace fuselens::collector
