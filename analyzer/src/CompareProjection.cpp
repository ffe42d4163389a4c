#include "fuselens/analyzer/CompareProjection.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "fuselens/db/Sqlite.h"

namespace fuselens::analyzer {
namespace {

std::uint64_t correlation_key(std::int64_t pid, std::int64_t correlation_id) {
  return static_cast<std::uint64_t>(pid) << 32 |
         (static_cast<std::uint64_t>(correlation_id) & 0xFFFFFFFFU);
}

const char* activity_query(ProjectedActivity activity) {
  switch (activity) {
    case ProjectedActivity::Memcpys:
      return "SELECT pid, correlation_id, end_ns - start_ns, bytes FROM memcpy";
    case ProjectedActivity::Memsets:
      return "SELECT pid, correlation_id, end_ns - start_ns, bytes FROM memset";
    case ProjectedActivity::Kernels:
      break;
  }
  return "SELECT pid, correlation_id, end_ns - start_ns, 0 FROM kernel";
}

}  // namespace

RangeProjection::RangeProjection(const db::Reader& reader, ProjectedActivity activity) {
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
  auto r = reader.prepare(activity_query(activity));
  while (r.step())
    records.push_back({correlation_key(r.int64(0), r.int64(1)), r.int64(2), r.int64(3)});
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
  auto a = reader.prepare("SELECT pid, correlation_id, tid, start_ns FROM api_call");
  while (a.step()) {
    const std::uint64_t call_key = correlation_key(a.int64(0), a.int64(1));
    const auto it = std::lower_bound(launches.begin(), launches.end(), call_key,
                                     [](const Launch& l, std::uint64_t v) { return l.key < v; });
    if (it == launches.end() || it->key != call_key || a.int64(3) >= it->start_ns) continue;
    it->tid = a.int64(2);
    it->start_ns = a.int64(3);
  }
  std::vector<std::pair<Key, ProjectedWork>> sorted;
  for (const Launch& l : launches) {
    if (l.start_ns == std::numeric_limits<std::int64_t>::max()) continue;  // no launch call
    sorted.push_back({{static_cast<std::int64_t>(l.key >> 32), l.tid, l.start_ns}, l.work});
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
  const auto first = std::lower_bound(keys_.begin() + 1, keys_.end(), Key{pid, tid, start_ns});
  const auto last = std::upper_bound(first, keys_.end(), Key{pid, tid, end_ns});
  const auto lo = static_cast<std::size_t>(first - keys_.begin()) - 1;
  const auto hi = static_cast<std::size_t>(last - keys_.begin()) - 1;
  const ProjectedWork& a = prefix_[lo];
  const ProjectedWork& b = prefix_[hi];
  return {b.records - a.records, b.launches - a.launches, b.gpu_ns - a.gpu_ns, b.bytes - a.bytes};
}

}  // namespace fuselens::analyzer
