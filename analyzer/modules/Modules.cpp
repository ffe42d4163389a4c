// The module view (Modules.h; docs/calling-context.md, "Modules").
#include "modules/Modules.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "cct/CallingContextData.h"
#include "modules/ModuleRanges.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

using ThreadKey = std::pair<std::int64_t, std::int64_t>;  // pid, tid

std::uint64_t op_key(std::int64_t pid, std::int64_t correlation) {
  return (static_cast<std::uint64_t>(pid) << 32) ^ static_cast<std::uint64_t>(correlation);
}

struct ModuleRange {
  std::int64_t start = 0, end = 0;
  std::string path;
  bool backward = false;
};

struct Launch {
  std::int64_t call = 0;  // start of the launching API call
  ModuleCost cost;
  bool backward = false;  // by the cct phase or the thread
};

// Running device-memory totals of one process and a sparse table for their maxima over an index
// range (O(1) per query after O(n log n) building).
class MemoryHistory {
 public:
  void add(std::int64_t time, std::int64_t delta) {
    held_ += delta;
    times_.push_back(time);
    totals_.push_back(held_);
  }
  void build() {
    table_.assign(1, totals_);
    for (std::size_t w = 1; 2 * w <= totals_.size(); w *= 2) {
      const auto& prev = table_.back();
      std::vector<std::int64_t> next(prev.size() - w);
      for (std::size_t i = 0; i < next.size(); ++i) next[i] = std::max(prev[i], prev[i + w]);
      table_.push_back(std::move(next));
    }
  }
  /// Bytes held at `start` or at any event in (start, end].
  std::int64_t peak(std::int64_t start, std::int64_t end) const {
    const auto first_after = static_cast<std::size_t>(
        std::upper_bound(times_.begin(), times_.end(), start) - times_.begin());
    std::int64_t best = first_after == 0 ? 0 : totals_[first_after - 1];
    const auto last = static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), end) -
                                               times_.begin());
    if (last > first_after) {
      std::size_t level = 0;
      while ((std::size_t{2} << level) <= last - first_after) ++level;
      const auto& row = table_[level];
      best = std::max({best, row[first_after], row[last - (std::size_t{1} << level)]});
    }
    return best;
  }

 private:
  std::int64_t held_ = 0;
  std::vector<std::int64_t> times_, totals_;
  std::vector<std::vector<std::int64_t>> table_;
};

std::map<std::int64_t, MemoryHistory> memory_histories(const db::Reader& reader) {
  std::map<std::int64_t, MemoryHistory> out;
  auto rows = db::device_memory_history(reader);
  while (auto e = rows.next()) {
    const auto op = static_cast<db::MemoryOperation>(e->operation);
    const std::int64_t delta = op == db::MemoryOperation::Allocation ? e->bytes
                               : op == db::MemoryOperation::Release  ? -e->bytes
                                                                     : 0;
    out[e->pid].add(e->timestamp_ns, delta);
  }
  for (auto& [pid, history] : out) history.build();
  return out;
}

// Operations the calling-context phase logic calls backward, by (pid, correlation id).
std::unordered_map<std::uint64_t, bool> cct_backward(const db::Reader& reader) {
  std::unordered_map<std::uint64_t, bool> out;
  if (!reader.has_table("api_context") || !db::has_launch_contexts(reader)) return out;
  const auto frames = cct::load_frames(reader);
  const auto nodes = cct::load_nodes(reader);
  const auto ops = cct::load_operations(reader);
  const auto phases = cct::operation_phases(reader, ops, nodes, frames);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (phases[i].phase == CctPhase::Backward) out[op_key(ops[i].pid, ops[i].correlation)] = true;
  }
  return out;
}

struct Aggregate {
  std::int64_t calls = 0;
  ModuleCost forward, backward;
  std::int64_t peak_forward = -1, peak_backward = -1;
};

}  // namespace

ModuleCost& ModuleCost::operator+=(const ModuleCost& other) {
  gpu_ns += other.gpu_ns;
  launches += other.launches;
  bytes += other.bytes;
  return *this;
}

double ModulesReport::backward_attributed_share() const {
  if (backward_total.gpu_ns <= 0) return 0;
  return static_cast<double>(backward_total.gpu_ns - backward_outside.gpu_ns) /
         static_cast<double>(backward_total.gpu_ns);
}

ModulesReport module_report(const db::Reader& reader) {
  ModulesReport report;
  std::map<ThreadKey, std::vector<ModuleRange>> ranges;  // by start, outer first
  {
    auto all = module_ranges(reader);
    report.derived = all.derived;
    for (auto& r : all.rows) {
      ranges[{r.pid, r.tid}].push_back({r.start, r.end, std::move(r.path), r.backward});
    }
  }
  if (ranges.empty()) return report;
  report.available = true;

  // Launches by thread, with their launching call's start (the earliest call of the id).
  std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> calls;  // tid, start
  {
    auto rows = db::api_call_starts(reader);
    while (auto c = rows.next()) {
      auto [it, added] = calls.try_emplace(op_key(c->pid, c->correlation_id), c->tid, c->start_ns);
      if (!added && c->start_ns < it->second.second) it->second = {c->tid, c->start_ns};
    }
  }
  const auto backward_ops = cct_backward(reader);
  std::map<ThreadKey, bool> autograd_thread;
  if (reader.has_table("thread")) {
    auto rows = db::threads(reader, /*ordered=*/false);
    while (auto t = rows.next()) {
      autograd_thread[{t->pid, t->tid}] = t->name && t->name->rfind("pt_autograd_", 0) == 0;
    }
  }
  std::map<ThreadKey, std::vector<Launch>> launches;
  for (const auto table : {db::GpuTable::Kernel, db::GpuTable::Memcpy, db::GpuTable::Memset}) {
    auto rows = db::launch_work(reader, table, /*by_correlation=*/false);
    while (auto w = rows.next()) {
      const std::uint64_t key = op_key(w->pid, w->correlation_id);
      Launch l;
      l.cost = {w->duration_ns, 1, w->bytes};
      l.backward = backward_ops.count(key) > 0;
      const auto call = calls.find(key);
      if (call == calls.end()) {  // no launching call: outside every range
        (l.backward ? report.backward_outside : report.forward_outside) += l.cost;
        if (l.backward) report.backward_total += l.cost;
        continue;
      }
      const ThreadKey thread{w->pid, call->second.first};
      if (const auto t = autograd_thread.find(thread); t != autograd_thread.end() && t->second)
        l.backward = true;
      l.call = call->second.second;
      launches[thread].push_back(l);
    }
  }

  // Each launch to the innermost module range open on its thread at its call.
  std::map<std::string, Aggregate> by_path;
  for (const auto& [thread, list] : ranges) {
    for (const auto& r : list) {
      if (!r.backward)
        ++by_path[r.path].calls;
      else
        by_path[r.path];
    }
  }
  for (auto& [thread, list] : launches) {
    std::sort(list.begin(), list.end(),
              [](const Launch& a, const Launch& b) { return a.call < b.call; });
    const auto r = ranges.find(thread);
    const std::vector<ModuleRange> none;
    const auto& rs = r == ranges.end() ? none : r->second;
    std::size_t next = 0;
    std::vector<const ModuleRange*> open;
    for (const Launch& l : list) {
      while (next < rs.size() && rs[next].start <= l.call) {
        while (!open.empty() && open.back()->end < rs[next].start) open.pop_back();
        open.push_back(&rs[next++]);
      }
      while (!open.empty() && open.back()->end < l.call) open.pop_back();
      const ModuleRange* inner = open.empty() ? nullptr : open.back();
      const bool backward = l.backward || (inner && inner->backward);
      if (backward) report.backward_total += l.cost;
      if (!inner) {
        (backward ? report.backward_outside : report.forward_outside) += l.cost;
        continue;
      }
      Aggregate& a = by_path[inner->path];
      (backward ? a.backward : a.forward) += l.cost;
    }
  }

  // Peak device memory of each path's ranges.
  const auto memory = memory_histories(reader);
  if (!memory.empty()) {
    for (const auto& [thread, list] : ranges) {
      const auto h = memory.find(thread.first);
      if (h == memory.end()) continue;
      for (const auto& r : list) {
        Aggregate& a = by_path[r.path];
        auto& peak = r.backward ? a.peak_backward : a.peak_forward;
        peak = std::max(peak, h->second.peak(r.start, r.end));
      }
    }
  }

  // The tree of path prefixes.
  struct Node {
    ModuleRow row;
    std::map<std::string, int> children;
  };
  std::vector<Node> nodes;
  std::map<std::string, int> roots;
  for (const auto& [path, a] : by_path) {
    int parent = -1;
    std::size_t from = 0;
    while (true) {
      const auto dot = path.find('.', from);
      const std::string prefix = path.substr(0, dot);
      auto& siblings = parent < 0 ? roots : nodes[static_cast<std::size_t>(parent)].children;
      auto it = siblings.find(prefix);
      if (it == siblings.end()) {
        Node n;
        n.row.path = prefix;
        n.row.name = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
        n.row.parent = parent;
        n.row.depth = parent < 0 ? 0 : nodes[static_cast<std::size_t>(parent)].row.depth + 1;
        nodes.push_back(std::move(n));
        it = (parent < 0 ? roots : nodes[static_cast<std::size_t>(parent)].children)
                 .emplace(prefix, static_cast<int>(nodes.size() - 1))
                 .first;
      }
      parent = it->second;
      if (dot == std::string::npos) break;
      from = dot + 1;
    }
    ModuleRow& row = nodes[static_cast<std::size_t>(parent)].row;
    row.calls = a.calls;
    row.forward_exclusive = a.forward;
    row.backward_exclusive = a.backward;
    row.peak_forward_bytes = a.peak_forward;
    row.peak_backward_bytes = a.peak_backward;
  }
  // Inclusive sums, children before parents (a child is always created after its parent).
  for (auto& n : nodes) {
    n.row.forward_inclusive = n.row.forward_exclusive;
    n.row.backward_inclusive = n.row.backward_exclusive;
  }
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const ModuleRow& child = nodes[i].row;
    if (child.parent < 0) continue;
    ModuleRow& parent = nodes[static_cast<std::size_t>(child.parent)].row;
    parent.forward_inclusive += child.forward_inclusive;
    parent.backward_inclusive += child.backward_inclusive;
    parent.peak_forward_bytes = std::max(parent.peak_forward_bytes, child.peak_forward_bytes);
    parent.peak_backward_bytes = std::max(parent.peak_backward_bytes, child.peak_backward_bytes);
  }
  // Depth first, heaviest first (inclusive forward + backward GPU time, then name).
  auto order = [&](const std::map<std::string, int>& set) {
    std::vector<int> out;
    for (const auto& [name, index] : set) out.push_back(index);
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
      const auto& x = nodes[static_cast<std::size_t>(a)].row;
      const auto& y = nodes[static_cast<std::size_t>(b)].row;
      return x.forward_inclusive.gpu_ns + x.backward_inclusive.gpu_ns >
             y.forward_inclusive.gpu_ns + y.backward_inclusive.gpu_ns;
    });
    return out;
  };
  std::vector<std::pair<int, int>> todo;  // node, parent row
  const auto top = order(roots);
  for (auto it = top.rbegin(); it != top.rend(); ++it) todo.emplace_back(*it, -1);
  while (!todo.empty()) {
    const auto [index, parent_row] = todo.back();
    todo.pop_back();
    ModuleRow row = nodes[static_cast<std::size_t>(index)].row;
    row.parent = parent_row;
    report.rows.push_back(std::move(row));
    const int me = static_cast<int>(report.rows.size() - 1);
    const auto children = order(nodes[static_cast<std::size_t>(index)].children);
    for (auto it = children.rbegin(); it != children.rend(); ++it) todo.emplace_back(*it, me);
  }
  return report;
}

}  // namespace fuselens::analyzer
