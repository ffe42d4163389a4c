#include "summary/NvtxGpuProjection.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Saturating.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

using db::saturating_add;

/// a - b clamped to [0, INT64_MAX]: timestamps come from the file.
std::int64_t clamped_duration(std::int64_t end, std::int64_t start) {
  std::int64_t d = 0;
  if (__builtin_sub_overflow(end, start, &d))
    return end > start ? std::numeric_limits<std::int64_t>::max() : 0;
  return std::max<std::int64_t>(0, d);
}

struct Range {
  std::int64_t pid = 0, tid = 0, start_ns = 0, end_ns = 0;
  std::int64_t domain_id = 0, text_id = 0;
  std::int64_t level = 0, children = 0;
};

/// Level and direct children of every range, per thread, by a stack over start order.
void nest(std::vector<Range>& ranges) {
  std::vector<std::size_t> order(ranges.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Range &x = ranges[a], &y = ranges[b];
    // Same start: the longer one encloses the shorter.
    return std::make_tuple(x.pid, x.tid, x.start_ns, -x.end_ns) <
           std::make_tuple(y.pid, y.tid, y.start_ns, -y.end_ns);
  });
  std::vector<std::size_t> open;
  for (const std::size_t i : order) {
    Range& r = ranges[i];
    while (!open.empty()) {
      const Range& top = ranges[open.back()];
      if (top.pid == r.pid && top.tid == r.tid && r.start_ns <= top.end_ns &&
          r.end_ns <= top.end_ns)
        break;
      open.pop_back();
    }
    r.level = static_cast<std::int64_t>(open.size());
    if (!open.empty()) ++ranges[open.back()].children;
    open.push_back(i);
  }
}

}  // namespace

std::vector<NvtxGpuProjectionRow> nvtx_gpu_projection(const db::Reader& reader,
                                                      NvtxProjection projection) {
  std::vector<Range> ranges;
  {
    auto cursor = db::nvtx_range_names(reader);
    while (auto r = cursor.next()) {
      if (!r->end_ns || *r->end_ns < r->start_ns) continue;  // never ended, or corrupt
      ranges.push_back({r->pid, r->tid, r->start_ns, *r->end_ns, r->domain_id, r->text_id, 0, 0});
    }
  }
  nest(ranges);

  std::vector<ProjectionWindow> windows;
  windows.reserve(ranges.size());
  for (const auto& r : ranges) windows.push_back({r.pid, r.tid, r.start_ns, r.end_ns});
  std::vector<std::int64_t> ops(ranges.size(), 0);
  for (const auto activity :
       {ProjectedActivity::Kernels, ProjectedActivity::Memcpys, ProjectedActivity::Memsets}) {
    const auto work = project_windows(reader, activity, windows, projection);
    for (std::size_t i = 0; i < work.size() && i < ops.size(); ++i) {
      ops[i] = saturating_add(ops[i], work[i].records);
    }
  }
  const SpanProjection spans(reader, projection);

  struct Group {
    std::vector<std::int64_t> projected;
    std::int64_t range_ns = 0, ops = 0, levels = 0, children = 0;
  };
  std::map<std::string, Group> groups;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> names;  // (domain, text) ids
  db::StringLookup lookup(reader);
  auto text_of = [&](std::int64_t id) {
    std::string value;
    lookup.with(id, [&](const std::string& v) { value = v; });
    return value;
  };
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const Range& r = ranges[i];
    if (ops[i] == 0) continue;
    const auto span = spans.inside(r.pid, r.tid, r.start_ns, r.end_ns);
    if (!span) continue;
    auto [it, added] = names.try_emplace({r.domain_id, r.text_id});
    if (added) {
      const std::string domain = text_of(r.domain_id), text = text_of(r.text_id);
      it->second = db::is_fuselens_instrumentation(text) ? std::string()
                   : domain.empty()                      ? text
                                                         : domain + ":" + text;
    }
    if (it->second.empty()) continue;  // FuseLens's own ranges, not shown
    Group& g = groups[it->second];
    g.projected.push_back(clamped_duration(span->end_ns, span->start_ns));
    g.range_ns = saturating_add(g.range_ns, clamped_duration(r.end_ns, r.start_ns));
    g.ops = saturating_add(g.ops, ops[i]);
    g.levels += r.level;
    g.children += r.children;
  }

  std::vector<NvtxGpuProjectionRow> rows;
  for (auto& [name, g] : groups) {
    NvtxGpuProjectionRow row;
    row.name = name;
    const auto n = static_cast<double>(g.projected.size());
    row.avg_level = static_cast<double>(g.levels) / n;
    row.avg_children = static_cast<double>(g.children) / n;
    row.projected = compute_stats(std::move(g.projected));
    row.range_total_ns = g.range_ns;
    row.gpu_ops = g.ops;
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.projected.total_ns != b.projected.total_ns) {
      return a.projected.total_ns > b.projected.total_ns;
    }
    return a.name < b.name;
  });
  return rows;
}

}  // namespace fuselens::analyzer
