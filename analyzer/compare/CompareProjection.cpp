#include "compare/CompareProjection.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fuselens/db/ActivityCursors.h"

namespace fuselens::analyzer {
namespace {

std::uint64_t correlation_key(std::int64_t pid, std::int64_t correlation_id) {
  return static_cast<std::uint64_t>(pid) << 32 |
         (static_cast<std::uint64_t>(correlation_id) & 0xFFFFFFFFU);
}

using Bounds = std::pair<std::int64_t, std::int64_t>;  // earliest start, latest end
using LaunchKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, tid, call start

/// `bounds[i]` of the launch `keys[i]` (sorted pid << 32 | correlation id) joined to its earliest
/// launching call, as RangeProjection joins them, sorted by (pid, tid, call start); launches
/// without a call are dropped.
std::vector<std::pair<LaunchKey, Bounds>> by_launching_call(const db::Reader& reader,
                                                            const std::vector<std::uint64_t>& keys,
                                                            const std::vector<Bounds>& bounds) {
  constexpr auto kNone = std::numeric_limits<std::int64_t>::max();
  std::vector<std::pair<std::int64_t, std::int64_t>> call(keys.size(), {0, kNone});  // tid, start
  auto calls = db::api_call_starts(reader);
  while (auto a = calls.next()) {
    const std::uint64_t call_key = correlation_key(a->pid, a->correlation_id);
    const auto it = std::lower_bound(keys.begin(), keys.end(), call_key);
    if (it == keys.end() || *it != call_key) continue;
    auto& c = call[static_cast<std::size_t>(it - keys.begin())];
    if (a->start_ns < c.second) c = {a->tid, a->start_ns};
  }
  std::vector<std::pair<LaunchKey, Bounds>> sorted;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (call[i].second == kNone) continue;  // no launch call
    sorted.push_back(
        {{static_cast<std::int64_t>(keys[i] >> 32), call[i].first, call[i].second}, bounds[i]});
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  return sorted;
}

db::GpuTable gpu_table(ProjectedActivity activity) {
  switch (activity) {
    case ProjectedActivity::Memcpys:
      return db::GpuTable::Memcpy;
    case ProjectedActivity::Memsets:
      return db::GpuTable::Memset;
    case ProjectedActivity::Kernels:
      break;
  }
  return db::GpuTable::Kernel;
}

/// The bounds of the windows of one thread and the work of launches bucketed against them.
struct ThreadWindows {
  std::vector<std::int64_t> starts, ends;          // sorted, unique
  std::vector<ProjectedWork> below_start, to_end;  // buckets, one more than bounds

  void add(std::int64_t t, const ProjectedWork& w) {
    // Counted in "launches before starts[j]" for every j >= u, and in "launches at or before
    // ends[j]" for every j >= l.
    const auto u = std::upper_bound(starts.begin(), starts.end(), t) - starts.begin();
    const auto l = std::lower_bound(ends.begin(), ends.end(), t) - ends.begin();
    accumulate(below_start[static_cast<std::size_t>(u)], w);
    accumulate(to_end[static_cast<std::size_t>(l)], w);
  }
  static void accumulate(ProjectedWork& sum, const ProjectedWork& w) {
    sum.records += w.records;
    sum.launches += w.launches;
    sum.gpu_ns += w.gpu_ns;
    sum.bytes += w.bytes;
  }
};

/// The thread a launch counts on: its own, or 0 (the whole process) under Process.
std::int64_t lane_tid(NvtxProjection projection, std::int64_t tid) {
  return projection == NvtxProjection::Thread ? tid : 0;
}

}  // namespace

const char* to_string(NvtxProjection projection) {
  return projection == NvtxProjection::Thread ? "thread" : "process";
}

std::optional<NvtxProjection> parse_nvtx_projection(std::string_view text) {
  if (text == "process") return NvtxProjection::Process;
  if (text == "thread") return NvtxProjection::Thread;
  return std::nullopt;
}

namespace {

/// The windows of one projection bucketed by lane (pid, thread or 0), and the launches counted
/// against them (project_windows).
class ProjectionLanes {
 public:
  ProjectionLanes(const std::vector<ProjectionWindow>& windows, NvtxProjection projection)
      : projection_(projection) {
    for (const auto& w : windows) {
      auto& t = lanes_[{w.pid, lane_tid(projection, w.tid)}];
      t.starts.push_back(w.start_ns);
      t.ends.push_back(w.end_ns);
    }
    for (auto& [key, t] : lanes_) {
      for (auto* v : {&t.starts, &t.ends}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
      }
      t.below_start.resize(t.starts.size() + 1);
      t.to_end.resize(t.ends.size() + 1);
    }
  }

  /// Counts `work`, launched by a call of (pid, tid) at `call_start_ns`.
  void add(std::int64_t pid, std::int64_t tid, std::int64_t call_start_ns,
           const ProjectedWork& work) {
    const std::pair<std::int64_t, std::int64_t> lane{pid, lane_tid(projection_, tid)};
    if (lane != cached_lane_) {
      cached_lane_ = lane;
      const auto it = lanes_.find(lane);
      cached_ = it == lanes_.end() ? nullptr : &it->second;
    }
    if (cached_ != nullptr) cached_->add(call_start_ns, work);
  }

  /// The work inside each of `windows` (those given to the constructor), once every launch was
  /// added.
  std::vector<ProjectedWork> result(const std::vector<ProjectionWindow>& windows) {
    for (auto& [key, t] : lanes_) {
      for (auto* buckets : {&t.below_start, &t.to_end}) {
        for (std::size_t i = 1; i < buckets->size(); ++i) {
          ThreadWindows::accumulate((*buckets)[i], (*buckets)[i - 1]);
        }
      }
    }
    std::vector<ProjectedWork> out(windows.size());
    for (std::size_t i = 0; i < windows.size(); ++i) {
      const auto& w = windows[i];
      if (w.start_ns > w.end_ns) continue;
      const auto& t = lanes_.at({w.pid, lane_tid(projection_, w.tid)});
      const auto js =
          std::lower_bound(t.starts.begin(), t.starts.end(), w.start_ns) - t.starts.begin();
      const auto je = std::lower_bound(t.ends.begin(), t.ends.end(), w.end_ns) - t.ends.begin();
      const ProjectedWork& a = t.below_start[static_cast<std::size_t>(js)];
      const ProjectedWork& b = t.to_end[static_cast<std::size_t>(je)];
      out[i] = {b.records - a.records, b.launches - a.launches, b.gpu_ns - a.gpu_ns,
                b.bytes - a.bytes};
    }
    return out;
  }

 private:
  NvtxProjection projection_;
  std::map<std::pair<std::int64_t, std::int64_t>, ThreadWindows> lanes_;
  std::pair<std::int64_t, std::int64_t> cached_lane_{-1, -1};
  ThreadWindows* cached_ = nullptr;
};

/// One pass over the activity's launches in (pid, correlation id) order merged with their
/// launching calls, each launch added to every one of `lanes`.
void count_launches(const db::Reader& reader, ProjectedActivity activity,
                    std::initializer_list<ProjectionLanes*> lanes) {
  db::LaunchCalls calls(reader);
  auto records = db::launch_work(reader, gpu_table(activity), /*by_correlation=*/true);
  auto record_row = records.next();
  while (record_row) {
    const std::uint64_t key = correlation_key(record_row->pid, record_row->correlation_id);
    const std::int64_t pid = record_row->pid, correlation = record_row->correlation_id;
    ProjectedWork work;
    work.launches = 1;
    for (; record_row && correlation_key(record_row->pid, record_row->correlation_id) == key;
         record_row = records.next()) {
      ++work.records;
      work.gpu_ns += record_row->duration_ns;
      work.bytes += record_row->bytes;
    }
    const auto call = calls.find(pid, correlation);
    if (!call) continue;  // no launching call: inside no window
    for (ProjectionLanes* l : lanes) l->add(pid, call->tid, call->start_ns, work);
  }
}

}  // namespace

std::vector<ProjectedWork> project_windows(const db::Reader& reader, ProjectedActivity activity,
                                           const std::vector<ProjectionWindow>& windows,
                                           NvtxProjection projection) {
  if (windows.empty()) return {};
  ProjectionLanes lanes(windows, projection);
  count_launches(reader, activity, {&lanes});
  return lanes.result(windows);
}

ThreadAndProcessWork project_windows_both(const db::Reader& reader, ProjectedActivity activity,
                                          const std::vector<ProjectionWindow>& windows) {
  if (windows.empty()) return {};
  ProjectionLanes thread(windows, NvtxProjection::Thread);
  ProjectionLanes process(windows, NvtxProjection::Process);
  count_launches(reader, activity, {&thread, &process});
  return {thread.result(windows), process.result(windows)};
}

RangeProjection::RangeProjection(const db::Reader& reader, ProjectedActivity activity,
                                 NvtxProjection projection)
    : projection_(projection) {
  // Joined here rather than in SQL: two sequential scans and a sort are several times faster
  // than SQLite's GROUP BY + JOIN on millions of rows (the index scans hit the table randomly).
  struct Launch {
    std::uint64_t key = 0;  // pid << 32 | correlation id (both 32-bit in CUPTI)
    ProjectedWork work;
    std::int64_t tid = 0;
    std::int64_t start_ns = std::numeric_limits<std::int64_t>::max();  // of the earliest call
  };
  struct Record {
    std::uint64_t key;
    std::int64_t duration, bytes;
  };
  std::vector<Record> records;
  auto rows = db::launch_work(reader, gpu_table(activity), /*by_correlation=*/false);
  while (auto r = rows.next())
    records.push_back({correlation_key(r->pid, r->correlation_id), r->duration_ns, r->bytes});
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.key < b.key; });
  std::vector<Launch> launches;
  for (const Record& rec : records) {
    if (launches.empty() || launches.back().key != rec.key) {
      launches.push_back({});
      launches.back().key = rec.key;
      launches.back().work.launches = 1;
    }
    ProjectedWork& w = launches.back().work;
    ++w.records;
    w.gpu_ns += rec.duration;
    w.bytes += rec.bytes;
  }
  records = {};
  auto calls = db::api_call_starts(reader);
  while (auto a = calls.next()) {
    const std::uint64_t call_key = correlation_key(a->pid, a->correlation_id);
    const auto it = std::lower_bound(launches.begin(), launches.end(), call_key,
                                     [](const Launch& l, std::uint64_t v) { return l.key < v; });
    if (it == launches.end() || it->key != call_key || a->start_ns >= it->start_ns) continue;
    it->tid = a->tid;
    it->start_ns = a->start_ns;
  }
  std::vector<std::pair<Key, ProjectedWork>> sorted;
  for (const Launch& l : launches) {
    if (l.start_ns == std::numeric_limits<std::int64_t>::max()) continue;  // no launch call
    sorted.push_back(
        {{static_cast<std::int64_t>(l.key >> 32), lane_tid(projection, l.tid), l.start_ns},
         l.work});
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  keys_.reserve(sorted.size() + 1);
  prefix_.reserve(sorted.size() + 1);
  keys_.emplace_back();  // sentinel: sums before the first launch
  for (const auto& [launch_key, work] : sorted) {
    keys_.push_back(launch_key);
    ProjectedWork sum = prefix_.back();
    sum.records += work.records;
    sum.launches += work.launches;
    sum.gpu_ns += work.gpu_ns;
    sum.bytes += work.bytes;
    prefix_.push_back(sum);
  }
}

ProjectedWork RangeProjection::inside(std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                                      std::int64_t end_ns) const {
  tid = lane_tid(projection_, tid);
  const auto first = std::lower_bound(keys_.begin() + 1, keys_.end(), Key{pid, tid, start_ns});
  const auto last = std::upper_bound(first, keys_.end(), Key{pid, tid, end_ns});
  const auto lo = static_cast<std::size_t>(first - keys_.begin()) - 1;
  const auto hi = static_cast<std::size_t>(last - keys_.begin()) - 1;
  const ProjectedWork& a = prefix_[lo];
  const ProjectedWork& b = prefix_[hi];
  return {b.records - a.records, b.launches - a.launches, b.gpu_ns - a.gpu_ns, b.bytes - a.bytes};
}

SpanProjection::SpanProjection(const db::Reader& reader, NvtxProjection projection)
    : projection_(projection) {
  struct Record {
    std::uint64_t key;
    std::int64_t start, end;
  };
  std::vector<Record> records;
  for (const db::GpuTable table :
       {db::GpuTable::Kernel, db::GpuTable::Memcpy, db::GpuTable::Memset}) {
    auto rows = db::gpu_intervals(reader, table);
    while (auto r = rows.next())
      records.push_back({correlation_key(r->pid, r->correlation_id), r->start_ns, r->end_ns});
  }
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.key < b.key; });
  std::vector<std::uint64_t> keys;
  std::vector<std::pair<std::int64_t, std::int64_t>> bounds;
  for (const Record& rec : records) {
    if (keys.empty() || keys.back() != rec.key) {
      keys.push_back(rec.key);
      bounds.emplace_back(rec.start, rec.end);
    } else {
      bounds.back().first = std::min(bounds.back().first, rec.start);
      bounds.back().second = std::max(bounds.back().second, rec.end);
    }
  }
  records = {};
  auto sorted = by_launching_call(reader, keys, bounds);
  keys = {};
  bounds = {};
  if (projection == NvtxProjection::Process) {  // the threads of a process in one sequence
    for (auto& entry : sorted) std::get<1>(entry.first) = 0;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
  }
  keys_.reserve(sorted.size());
  bounds_.reserve(sorted.size());
  for (const auto& [key, b] : sorted) {
    keys_.push_back(key);
    bounds_.push_back(b);
  }
}

std::optional<ProjectedSpan> SpanProjection::inside(std::int64_t pid, std::int64_t tid,
                                                    std::int64_t start_ns,
                                                    std::int64_t end_ns) const {
  tid = lane_tid(projection_, tid);
  const auto first = std::lower_bound(keys_.begin(), keys_.end(), Key{pid, tid, start_ns});
  const auto last = std::upper_bound(first, keys_.end(), Key{pid, tid, end_ns});
  if (first >= last) return std::nullopt;
  auto i = static_cast<std::size_t>(first - keys_.begin());
  const auto end = static_cast<std::size_t>(last - keys_.begin());
  ProjectedSpan span{bounds_[i].first, bounds_[i].second};
  for (++i; i < end; ++i) {
    span.start_ns = std::min(span.start_ns, bounds_[i].first);
    span.end_ns = std::max(span.end_ns, bounds_[i].second);
  }
  return span;
}

}  // namespace fuselens::analyzer
