// project_ranges: compare's per-window work and GPU span in one streaming pass (issue 21: ten
// million launches without holding them; CompareProjection.h).

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "compare/CompareProjection.h"
#include "fuselens/db/ActivityCursors.h"

namespace fuselens::analyzer {
namespace {

/// The windows of one lane (a thread, or a whole process) swept in start order.
class Lane {
 public:
  void add(std::size_t window) { by_start_.push_back(window); }
  void sort(const std::vector<ProjectionWindow>& windows) {
    std::stable_sort(by_start_.begin(), by_start_.end(), [&](std::size_t a, std::size_t b) {
      return windows[a].start_ns < windows[b].start_ns;
    });
  }
  /// Calls `visit(i)` for every window i of the lane with start <= t <= end.
  template <typename Visit>
  void stab(const std::vector<ProjectionWindow>& windows, std::int64_t t, Visit&& visit) {
    if (t < time_) {  // a call out of correlation order: every window that starts by t
      for (const std::size_t i : by_start_) {
        if (windows[i].start_ns > t) break;
        if (windows[i].end_ns >= t) visit(i);
      }
      return;
    }
    time_ = t;
    for (; next_ < by_start_.size() && windows[by_start_[next_]].start_ns <= t; ++next_) {
      active_.emplace_back(windows[by_start_[next_]].end_ns, by_start_[next_]);
      std::push_heap(active_.begin(), active_.end(), std::greater<>());
    }
    while (!active_.empty() && active_.front().first < t) {  // ended before t
      std::pop_heap(active_.begin(), active_.end(), std::greater<>());
      active_.pop_back();
    }
    for (const auto& [end, i] : active_) visit(i);
  }

 private:
  std::vector<std::size_t> by_start_;
  std::size_t next_ = 0;  // by_start_[0, next_) have started by time_
  std::int64_t time_ = std::numeric_limits<std::int64_t>::min();
  std::vector<std::pair<std::int64_t, std::size_t>> active_;  // min-heap of (end, window)
};

using LaneKey = std::pair<std::int64_t, std::int64_t>;  // pid, tid (0: the whole process)

std::map<LaneKey, Lane> lanes_of(const std::vector<ProjectionWindow>& windows, bool by_thread) {
  std::map<LaneKey, Lane> lanes;
  for (std::size_t i = 0; i < windows.size(); ++i)
    lanes[{windows[i].pid, by_thread ? windows[i].tid : 0}].add(i);
  for (auto& [key, lane] : lanes) lane.sort(windows);
  return lanes;
}

}  // namespace

std::vector<ProjectedRange> project_ranges(const db::Reader& reader,
                                           const std::vector<ProjectionWindow>& windows,
                                           NvtxProjection projection) {
  std::vector<ProjectedRange> out(windows.size());
  if (windows.empty()) return out;
  const bool by_thread = projection == NvtxProjection::Thread;
  std::map<LaneKey, Lane> lanes = lanes_of(windows, by_thread);
  std::map<LaneKey, Lane> process_lanes;  // the Process projection's kernels, under Thread
  if (by_thread) process_lanes = lanes_of(windows, false);

  db::LaunchCalls calls(reader);
  auto rows = db::gpu_spans_by_correlation(reader, db::NameKind::Demangled);
  auto row = rows.next();
  while (row) {
    // One launch: every record of its (pid, correlation id).
    const std::int64_t pid = row->pid, correlation = row->correlation_id;
    ProjectedWork work[3];  // by db::GpuTable
    ProjectedSpan span{std::numeric_limits<std::int64_t>::max(),
                       std::numeric_limits<std::int64_t>::min()};
    for (; row && row->pid == pid && row->correlation_id == correlation; row = rows.next()) {
      const auto table = static_cast<std::size_t>(row->table);
      ProjectedWork& w = work[table < 3 ? table : 0];
      w.records += 1;
      w.launches = 1;
      w.gpu_ns += row->end_ns - row->start_ns;
      w.bytes += row->bytes;
      span.start_ns = std::min(span.start_ns, row->start_ns);
      span.end_ns = std::max(span.end_ns, row->end_ns);
    }
    // Its launching call, as RangeProjection takes it.
    const auto call = calls.find(pid, correlation);
    if (!call) continue;  // no launching call: inside no window
    const std::int64_t tid = call->tid, start = call->start_ns;
    if (auto lane = lanes.find({pid, by_thread ? tid : 0}); lane != lanes.end()) {
      lane->second.stab(windows, start, [&](std::size_t i) {
        ProjectedRange& r = out[i];
        for (auto [sum, w] : {std::pair(&r.kernels, &work[0]), std::pair(&r.copies, &work[1]),
                              std::pair(&r.memsets, &work[2])}) {
          sum->records += w->records;
          sum->launches += w->launches;
          sum->gpu_ns += w->gpu_ns;
          sum->bytes += w->bytes;
        }
        if (!r.span) {
          r.span = span;
        } else {
          r.span->start_ns = std::min(r.span->start_ns, span.start_ns);
          r.span->end_ns = std::max(r.span->end_ns, span.end_ns);
        }
        if (!by_thread) r.process_kernels += work[0].records;
      });
    }
    if (by_thread) {
      if (auto lane = process_lanes.find({pid, 0}); lane != process_lanes.end()) {
        lane->second.stab(windows, start,
                          [&](std::size_t i) { out[i].process_kernels += work[0].records; });
      }
    }
  }
  return out;
}

}  // namespace fuselens::analyzer
