#include "timeline/TimelineLod.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "fuselens/db/Sqlite.h"
#include "fuselens/db/TimelineLodStore.h"

namespace fuselens::analyzer {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t v = 0;
  return __builtin_add_overflow(a, b, &v)
             ? (b > 0 ? kMax : std::numeric_limits<std::int64_t>::min())
             : v;
}

/// The span of the timeline load_timeline would build (db::timeline_time_span).
std::pair<std::int64_t, std::int64_t> capture_span(const db::Reader& reader) {
  return db::timeline_time_span(reader);
}

/// Per-bucket sums of one row at the finest level while it is computed.
struct Accumulator {
  std::vector<std::int64_t> busy, starts;
  std::int64_t items = 0, first = kMax, last = std::numeric_limits<std::int64_t>::min();
  std::int64_t longest = 0;
};

class Grid {
 public:
  Grid(std::int64_t begin, std::int64_t end, std::int64_t items) : begin_(begin) {
    std::int64_t span = 0;
    if (__builtin_sub_overflow(end, begin, &span) || span < 0) {
      throw db::Error("timeline level of detail: the capture's span does not fit in 2^63 ns");
    }
    const std::int64_t most = std::clamp(items / 16, kLodMinBuckets, kLodFinestBuckets);
    bucket_ = std::max(kLodMinBucketNs, span / most + 1);
    buckets_ = static_cast<std::size_t>(span / bucket_ + 1);
  }
  std::int64_t bucket_ns() const { return bucket_; }
  std::size_t buckets() const { return buckets_; }

  void add(Accumulator& a, std::int64_t start, std::int64_t end) const {
    if (a.busy.empty()) {
      a.busy.assign(buckets_, 0);
      a.starts.assign(buckets_, 0);
    }
    std::int64_t s = 0, e = 0;
    // Reader's checks keep times in [0, 2^62): never overflows; clamp to the grid regardless.
    if (__builtin_sub_overflow(start, begin_, &s) || __builtin_sub_overflow(end, begin_, &e))
      return;
    const std::int64_t limit = static_cast<std::int64_t>(buckets_) * bucket_;
    s = std::clamp<std::int64_t>(s, 0, limit - 1);
    e = std::clamp<std::int64_t>(e, s, limit);
    ++a.items;
    a.first = std::min(a.first, start);
    a.last = std::max({a.last, end, start});
    a.longest = std::max(a.longest, e - s);
    a.starts[static_cast<std::size_t>(s / bucket_)] += 1;
    for (std::int64_t b = s / bucket_; b * bucket_ < e; ++b) {
      const std::int64_t lo = std::max(s, b * bucket_), hi = std::min(e, (b + 1) * bucket_);
      a.busy[static_cast<std::size_t>(b)] += hi - lo;
    }
  }

  /// The stored levels of one row.
  std::vector<db::StoredLodLevel> levels(const Accumulator& a,
                                         const db::StoredLodLevel& key) const {
    std::vector<db::StoredLodLevel> out;
    std::vector<std::int64_t> busy = a.busy, starts = a.starts;
    if (busy.empty()) {
      busy.assign(buckets_, 0);
      starts.assign(buckets_, 0);
    }
    std::int64_t width = bucket_;
    for (int level = 0; level < kLodLevels; ++level) {
      db::StoredLodLevel l = key;
      l.level = level;
      l.begin_ns = begin_;
      l.bucket_ns = width;
      l.item_count = a.items;
      l.first_ns = a.items ? a.first : 0;
      l.last_ns = a.items ? a.last : 0;
      l.max_duration_ns = a.longest;
      l.busy_ns = busy;
      l.starts = starts;
      out.push_back(std::move(l));
      // The next level: sums of kLodLevelFactor buckets.
      const std::size_t n = (busy.size() + kLodLevelFactor - 1) / kLodLevelFactor;
      std::vector<std::int64_t> b(n, 0), c(n, 0);
      for (std::size_t i = 0; i < busy.size(); ++i) {
        b[i / kLodLevelFactor] = sat_add(b[i / kLodLevelFactor], busy[i]);
        c[i / kLodLevelFactor] += starts[i];
      }
      busy = std::move(b);
      starts = std::move(c);
      width *= kLodLevelFactor;
    }
    return out;
  }

 private:
  std::int64_t begin_;
  std::int64_t bucket_ = 1;
  std::size_t buckets_ = 1;
};

/// Kernels, copies, memsets and API calls of the capture.
std::int64_t item_count(const db::Reader& reader) { return db::lod_source_row_count(reader); }

std::vector<db::StoredLodLevel> compute_levels(const db::Reader& reader, std::int64_t items) {
  const auto [begin, end] = capture_span(reader);
  const Grid grid(begin, end, items);
  using GpuKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  std::map<GpuKey, Accumulator> gpu;
  auto spans = db::lod_gpu_items(reader);
  while (auto i = spans.next()) {
    grid.add(gpu[{static_cast<std::uint32_t>(i->device_id),
                  static_cast<std::uint32_t>(i->stream_id), static_cast<std::uint32_t>(i->pid)}],
             i->start_ns, i->end_ns);
  }
  // API calls at their depth, as load_timeline assigns it (enclosing calls first).
  using ApiKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  std::map<ApiKey, Accumulator> api;
  auto calls = db::lod_api_items(reader);
  std::vector<std::int64_t> open_ends;
  std::pair<std::int64_t, std::int64_t> thread{-1, -1};
  while (auto a = calls.next()) {
    if (std::make_pair(a->pid, a->tid) != thread) {
      open_ends.clear();
      thread = {a->pid, a->tid};
    }
    while (!open_ends.empty() && open_ends.back() <= a->start_ns) open_ends.pop_back();
    const auto depth = static_cast<std::uint32_t>(open_ends.size());
    open_ends.push_back(a->end_ns);
    grid.add(api[{static_cast<std::uint32_t>(a->pid), static_cast<std::uint32_t>(a->tid), depth}],
             a->start_ns, a->end_ns);
  }
  std::vector<db::StoredLodLevel> out;
  for (const auto& [key, acc] : gpu) {
    db::StoredLodLevel k;
    k.lane_kind = db::kLodGpuLane;
    k.device_id = std::get<0>(key);
    k.stream_id = std::get<1>(key);
    k.pid = std::get<2>(key);
    for (auto& l : grid.levels(acc, k)) out.push_back(std::move(l));
  }
  for (const auto& [key, acc] : api) {
    db::StoredLodLevel k;
    k.lane_kind = db::kLodApiLane;
    k.pid = std::get<0>(key);
    k.tid = std::get<1>(key);
    k.depth = std::get<2>(key);
    for (auto& l : grid.levels(acc, k)) out.push_back(std::move(l));
  }
  return out;
}

// A row's lane and extent from its first stored level (its levels are added by the caller).
LodRow lod_row(const db::StoredLodLevel& f) {
  LodRow row;
  row.kind = f.lane_kind == db::kLodApiLane ? LaneKind::Api : LaneKind::Gpu;
  row.device_id = static_cast<std::uint32_t>(f.device_id);
  row.stream_id = static_cast<std::uint32_t>(f.stream_id);
  row.pid = static_cast<std::uint32_t>(f.pid);
  row.tid = static_cast<std::uint32_t>(f.tid);
  row.depth = static_cast<std::uint32_t>(f.depth);
  row.item_count = f.item_count;
  row.first_ns = f.first_ns;
  row.last_ns = f.last_ns;
  row.max_duration_ns = f.max_duration_ns;
  row.begin_ns = f.begin_ns;
  return row;
}

LodLevel to_level(const db::StoredLodLevel& s) {
  LodLevel l;
  l.bucket_ns = s.bucket_ns;
  l.busy_before.reserve(s.busy_ns.size() + 1);
  l.starts_before.reserve(s.starts.size() + 1);
  l.busy_before.push_back(0);
  l.starts_before.push_back(0);
  for (std::size_t i = 0; i < s.busy_ns.size(); ++i) {
    l.busy_before.push_back(sat_add(l.busy_before.back(), s.busy_ns[i]));
    l.starts_before.push_back(sat_add(l.starts_before.back(), s.starts[i]));
  }
  return l;
}

bool fits_u32(std::int64_t v) { return v >= 0 && v <= std::numeric_limits<std::uint32_t>::max(); }

/// Why the stored rows of one lane row (its kLodLevels levels, by level) are implausible; empty
/// when they are not.
std::string implausible(const std::vector<const db::StoredLodLevel*>& levels, std::int64_t begin) {
  const auto& f = *levels[0];
  const std::string row = "timeline_lod row (kind " + std::to_string(f.lane_kind) + ", pid " +
                          std::to_string(f.pid) + ", depth " + std::to_string(f.depth) + ")";
  if (f.lane_kind != db::kLodGpuLane && f.lane_kind != db::kLodApiLane) {
    return row + ": lane_kind is not 0 (GPU) or 2 (API)";
  }
  for (const auto v : {f.device_id, f.stream_id, f.pid, f.tid, f.depth}) {
    if (!fits_u32(v)) return row + ": an id outside [0, 2^32)";
  }
  if (f.depth > 4096) return row + ": depth " + std::to_string(f.depth) + " is implausible";
  // Times as db::Reader accepts them (0 <= t < 2^62 ns), counts below 2^48: sums of a few rows
  // never come near int64's range.
  constexpr std::int64_t kMaxNs = std::int64_t{1} << 62, kMaxItems = std::int64_t{1} << 48;
  const auto time_ok = [&](std::int64_t t) { return t >= 0 && t < kMaxNs; };
  if (!time_ok(f.begin_ns) || !time_ok(f.first_ns) || !time_ok(f.last_ns) ||
      !time_ok(f.max_duration_ns) || f.item_count > kMaxItems) {
    return row + ": a time outside [0, 2^62) ns or more than 2^48 items";
  }
  if (levels.size() != static_cast<std::size_t>(kLodLevels)) {
    return row + ": " + std::to_string(levels.size()) + " levels, not " +
           std::to_string(kLodLevels);
  }
  std::int64_t width = f.bucket_ns;
  if (width < 1) return row + ": bucket_ns " + std::to_string(width) + " is not positive";
  for (int i = 0; i < kLodLevels; ++i) {
    const auto& l = *levels[static_cast<std::size_t>(i)];
    if (l.level != i) return row + ": level " + std::to_string(i) + " is missing";
    if (l.begin_ns != begin) return row + ": begin_ns differs from the other rows'";
    if (l.bucket_ns != width)
      return row + ": level " + std::to_string(i) + " has buckets of the wrong width";
    if (l.item_count != f.item_count || l.first_ns != f.first_ns || l.last_ns != f.last_ns ||
        l.max_duration_ns != f.max_duration_ns) {
      return row + ": its levels disagree on its items";
    }
    const auto n = static_cast<std::int64_t>(l.busy_ns.size());
    if (n < 1 || n > kLodFinestBuckets + 1) {
      return row + ": " + std::to_string(n) + " buckets at level " + std::to_string(i);
    }
    std::int64_t covered = 0, last = 0;
    if (__builtin_mul_overflow(n, width, &covered) ||
        (f.item_count > 0 && (__builtin_sub_overflow(f.last_ns, begin, &last) || last > covered))) {
      return row + ": its buckets do not cover its items";
    }
    std::int64_t starts = 0;
    for (std::int64_t b = 0; b < n; ++b) {
      const auto k = static_cast<std::size_t>(b);
      if (l.busy_ns[k] < 0 || l.starts[k] < 0) return row + ": a negative bucket";
      starts = sat_add(starts, l.starts[k]);
    }
    if (starts != f.item_count) return row + ": its buckets do not add up to item_count";
    if (i + 1 < kLodLevels && __builtin_mul_overflow(width, kLodLevelFactor, &width)) {
      return row + ": bucket_ns too large";
    }
  }
  if (f.item_count < 0 || f.max_duration_ns < 0 || (f.item_count > 0 && f.first_ns > f.last_ns)) {
    return row + ": implausible item_count, first_ns, last_ns or max_duration_ns";
  }
  return {};
}

}  // namespace

std::int64_t TimelineLod::item_count() const {
  std::int64_t n = 0;
  for (const auto& r : rows) n = sat_add(n, r.item_count);
  return n;
}

TimelineLod compute_timeline_lod(const db::Reader& reader) {
  auto levels = compute_levels(reader, item_count(reader));
  TimelineLod lod;
  // The same grouping as load_timeline_lod.
  for (std::size_t i = 0; i + kLodLevels <= levels.size(); i += kLodLevels) {
    const auto& f = levels[i];
    lod.begin_ns = f.begin_ns;
    LodRow row = lod_row(f);
    for (int l = 0; l < kLodLevels; ++l)
      row.levels.push_back(to_level(levels[i + static_cast<std::size_t>(l)]));
    lod.rows.push_back(std::move(row));
  }
  return lod;
}

void store_timeline_lod(const std::string& path, std::int64_t min_items) {
  db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
  store_timeline_lod(reader, min_items);
}

namespace {

// The levels store_timeline_lod stores: none under `min_items` items.
std::vector<db::StoredLodLevel> levels_to_store(db::Reader& reader, std::int64_t min_items) {
  const std::int64_t items = item_count(reader);
  if (items < min_items) return {};
  reader.check_table_timestamps("kernel");
  reader.check_table_timestamps("api_call");
  return compute_levels(reader, items);
}

}  // namespace

void store_timeline_lod(db::Reader& reader, std::int64_t min_items) {
  db::write_timeline_lod(reader.connection(), levels_to_store(reader, min_items));
}

PreparedStore prepare_timeline_lod(const std::string& path, std::int64_t min_items) {
  db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
  return prepare_timeline_lod(reader, min_items);
}

PreparedStore prepare_timeline_lod(db::Reader& reader, std::int64_t min_items) {
  auto levels =
      std::make_shared<const std::vector<db::StoredLodLevel>>(levels_to_store(reader, min_items));
  return [levels](db::Reader& target) { db::write_timeline_lod(target.connection(), *levels); };
}

bool has_timeline_lod(const db::Reader& reader) { return db::has_timeline_lod_tables(reader); }

std::optional<TimelineLod> load_timeline_lod(const db::Reader& reader, std::string* why) {
  const auto refuse = [&](std::string reason) -> std::optional<TimelineLod> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  // The tables decide, not the version: storing the analyses' results (AnalysisStore.h) adds
  // every version-10 table to a version-9 capture without changing its version.
  if (!db::has_timeline_lod_tables(reader)) {
    return refuse("no stored level of detail (schema version " +
                  std::to_string(reader.schema_version()) + ", no timeline_lod tables)");
  }
  std::vector<db::StoredLodLevel> stored;
  try {
    const auto sources = db::read_timeline_lod_sources(reader);
    for (const auto table : db::kTimelineLodSourceTables) {
      const auto it = std::find_if(sources.begin(), sources.end(),
                                   [&](const db::LodSource& s) { return s.table == table; });
      if (it == sources.end()) {
        return refuse("no stored level of detail (timeline_lod_source lacks " + std::string(table) +
                      ")");
      }
      if (it->max_id != db::lod_source_max_id(reader, table)) {
        return refuse("stored level of detail is stale: " + std::string(table) +
                      " changed after it was stored");
      }
    }
    stored = db::read_timeline_lod(reader);
  } catch (const db::Error& e) {
    return refuse(std::string("stored level of detail is damaged: ") + e.what());
  }
  if (stored.empty()) return refuse("no stored level of detail (timeline_lod is empty)");
  TimelineLod lod;
  lod.begin_ns = stored.front().begin_ns;
  for (std::size_t i = 0; i < stored.size();) {
    std::vector<const db::StoredLodLevel*> group;
    const auto same = [&](const db::StoredLodLevel& a, const db::StoredLodLevel& b) {
      return std::tie(a.lane_kind, a.device_id, a.stream_id, a.pid, a.tid, a.depth) ==
             std::tie(b.lane_kind, b.device_id, b.stream_id, b.pid, b.tid, b.depth);
    };
    std::size_t j = i;
    while (j < stored.size() && same(stored[i], stored[j])) group.push_back(&stored[j++]);
    if (auto reason = implausible(group, lod.begin_ns); !reason.empty()) {
      return refuse("stored level of detail is damaged: " + reason);
    }
    const auto& f = *group[0];
    LodRow row = lod_row(f);
    for (const auto* l : group) row.levels.push_back(to_level(*l));
    lod.rows.push_back(std::move(row));
    i = j;
  }
  return lod;
}

namespace {

/// Sum over [t0, t1) of the prefix-summed buckets `before` of width `width` from `begin`: whole
/// buckets exactly, edge buckets in proportion.
std::int64_t prefix_range(const std::vector<std::int64_t>& before, std::int64_t begin,
                          std::int64_t width, std::int64_t t0, std::int64_t t1) {
  const auto n = static_cast<std::int64_t>(before.size()) - 1;
  if (n <= 0 || t1 <= t0) return 0;
  // In double: ns offsets of a hostile view may be far apart (no int64 overflow).
  const double a =
      (static_cast<double>(t0) - static_cast<double>(begin)) / static_cast<double>(width);
  const double b =
      (static_cast<double>(t1) - static_cast<double>(begin)) / static_cast<double>(width);
  const double lo = std::clamp(a, 0.0, static_cast<double>(n));
  const double hi = std::clamp(b, 0.0, static_cast<double>(n));
  if (hi <= lo) return 0;
  const auto at = [&](double x) {  // the prefix sum at fractional bucket x
    const auto i = static_cast<std::int64_t>(x);
    const double base = static_cast<double>(before[static_cast<std::size_t>(i)]);
    if (i >= n) return base;
    const double next = static_cast<double>(before[static_cast<std::size_t>(i + 1)]);
    return base + (next - base) * (x - static_cast<double>(i));
  };
  return static_cast<std::int64_t>(std::llround(std::max(0.0, at(hi) - at(lo))));
}

}  // namespace

std::int64_t lod_busy_ns(const LodRow& row, std::int64_t t0, std::int64_t t1,
                         std::int64_t resolution_ns) {
  if (row.levels.empty()) return 0;
  const LodLevel* use = &row.levels.front();
  for (const auto& l : row.levels) {
    if (l.bucket_ns <= resolution_ns) use = &l;
  }
  // A bucket_ns of 0 cannot be loaded (load_timeline_lod); the begin is the row's grid origin.
  return prefix_range(use->busy_before, row.begin_ns, use->bucket_ns, t0, t1);
}

std::int64_t lod_items(const LodRow& row, std::int64_t t0, std::int64_t t1) {
  if (row.levels.empty() || t1 <= t0) return 0;
  const LodLevel& l = row.levels.front();
  const auto n = static_cast<std::int64_t>(l.buckets());
  const double begin = static_cast<double>(row.begin_ns);
  const double w = static_cast<double>(l.bucket_ns);
  const auto first = static_cast<std::int64_t>(
      std::clamp(std::floor((static_cast<double>(t0) - begin) / w), 0.0, static_cast<double>(n)));
  const auto last = static_cast<std::int64_t>(
      std::clamp(std::ceil((static_cast<double>(t1) - begin) / w), 0.0, static_cast<double>(n)));
  if (last <= first) return 0;
  return l.starts_before[static_cast<std::size_t>(last)] -
         l.starts_before[static_cast<std::size_t>(first)];
}

}  // namespace fuselens::analyzer
