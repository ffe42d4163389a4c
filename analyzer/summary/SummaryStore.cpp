#include "summary/SummaryStore.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compare/CompareProjection.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/SummaryStore.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

constexpr const auto& kSourceTables = db::kSummarySourceTables;

struct SourceState {
  std::int64_t rows = 0;
  std::int64_t max_id = 0;
};

bool plausible(const DurationStats& s) {
  return s.count >= 1 && s.min_ns >= 0 && s.min_ns <= s.max_ns && s.max_ns < db::kMaxTimestampNs &&
         s.total_ns >= s.max_ns && std::isfinite(s.median_ns) &&
         s.median_ns >= static_cast<double>(s.min_ns) &&
         s.median_ns <= static_cast<double>(s.max_ns) && std::isfinite(s.stddev_ns) &&
         s.stddev_ns >= 0;
}

/// Reads the stored durations of `source`; nullopt when one is implausible or the counts do not
/// add up to `rows`.
std::optional<StatsById> load_durations(const db::Reader& reader, std::string_view source,
                                        std::int64_t rows) {
  auto stored = db::summary_durations(reader, source);
  StatsById out;
  std::int64_t counted = 0;
  while (auto row = stored.next()) {
    DurationStats d;
    d.count = row->count;
    d.total_ns = row->total_ns;
    d.min_ns = row->min_ns;
    d.max_ns = row->max_ns;
    d.median_ns = row->median_ns;
    d.stddev_ns = row->stddev_ns;
    if (!plausible(d) || __builtin_add_overflow(counted, d.count, &counted)) return std::nullopt;
    d.avg_ns = static_cast<double>(static_cast<long double>(d.total_ns) /
                                   static_cast<long double>(d.count));
    out.emplace_back(row->name_id, d);
  }
  if (counted != rows) return std::nullopt;
  return out;
}

/// Reads stored (range id, kernels, GPU ns) rows into `out`; false when a value is negative or a
/// range repeats.
bool load_range_work(db::Cursor<db::StoredRangeWork>& rows,
                     std::unordered_map<std::int64_t, RangeWork>& out) {
  while (auto row = rows.next()) {
    if (row->kernels < 0 || row->gpu_ns < 0) return false;
    if (!out.emplace(row->range_id, RangeWork{row->kernels, row->gpu_ns}).second) return false;
  }
  return true;
}

std::vector<db::StoredDuration> stored_rows(const StatsById& stats) {
  std::vector<db::StoredDuration> out;
  out.reserve(stats.size());
  for (const auto& [id, d] : stats) {
    out.push_back({id, d.count, d.total_ns, d.min_ns, d.max_ns, d.median_ns, d.stddev_ns});
  }
  return out;
}

}  // namespace

StatsById stats_by_short_name(const db::Reader& reader) {
  // No index leads with short_name_id: one scan, the durations grouped in memory (8 bytes a
  // kernel), instead of SQLite sorting every row.
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> groups;
  auto rows = db::kernel_durations_by_name(reader, db::NameKind::Short, db::RowOrder::Scan);
  while (auto r = rows.next()) groups[r->id].push_back(r->duration_ns);
  StatsById out;
  out.reserve(groups.size());
  for (auto& [id, durations] : groups) out.emplace_back(id, compute_stats(std::move(durations)));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

StatsById stats_by_id(db::Cursor<db::IdDuration>& rows) {
  StatsById out;
  auto row = rows.next();
  while (row) {
    const std::int64_t id = row->id;
    std::vector<std::int64_t> durations;
    for (; row && row->id == id; row = rows.next()) durations.push_back(row->duration_ns);
    out.emplace_back(id, compute_stats(std::move(durations)));
  }
  return out;
}

namespace {

/// The ended NVTX ranges of the capture: their ids and windows, in the same order.
struct EndedRanges {
  std::vector<std::int64_t> ids;
  std::vector<ProjectionWindow> windows;
};

/// The capture's ended ranges; when there is one, the kernel and api_call times are checked too
/// (projecting them reads those rows).
EndedRanges ended_ranges(const db::Reader& reader) {
  EndedRanges out;
  auto ranges = db::ended_nvtx_ranges(reader);
  while (auto r = ranges.next()) {
    out.ids.push_back(r->id);
    out.windows.push_back({r->pid, r->tid, r->start_ns, *r->end_ns});
  }
  if (!out.windows.empty()) {
    reader.check_table_timestamps("kernel");
    reader.check_table_timestamps("api_call");
  }
  return out;
}

std::unordered_map<std::int64_t, RangeWork> by_range_id(const std::vector<std::int64_t>& ids,
                                                        const std::vector<ProjectedWork>& work) {
  std::unordered_map<std::int64_t, RangeWork> out;
  for (std::size_t i = 0; i < ids.size(); ++i) out[ids[i]] = {work[i].records, work[i].gpu_ns};
  return out;
}

}  // namespace

std::unordered_map<std::int64_t, RangeWork> project_nvtx_ranges(const db::Reader& reader,
                                                                NvtxProjection projection) {
  const EndedRanges r = ended_ranges(reader);
  if (r.windows.empty()) return {};
  return by_range_id(r.ids,
                     project_windows(reader, ProjectedActivity::Kernels, r.windows, projection));
}

NvtxWorkBoth project_nvtx_ranges_both(const db::Reader& reader) {
  const EndedRanges r = ended_ranges(reader);
  if (r.windows.empty()) return {};
  const ThreadAndProcessWork work =
      project_windows_both(reader, ProjectedActivity::Kernels, r.windows);
  return {by_range_id(r.ids, work.thread), by_range_id(r.ids, work.process)};
}

StoredAggregates compute_aggregates(const db::Reader& reader) {
  reader.check_table_timestamps("kernel");  // once each: the Reader remembers
  reader.check_table_timestamps("api_call");
  StoredAggregates a;
  auto kernels = db::kernel_durations_by_name(reader, db::NameKind::Demangled, db::RowOrder::ById);
  a.kernels_by_demangled_name = stats_by_id(kernels);
  a.kernels_by_short_name = stats_by_short_name(reader);
  auto calls = db::api_durations_by_name(reader);
  a.api_by_name = stats_by_id(calls);
  NvtxWorkBoth nvtx = project_nvtx_ranges_both(reader);
  a.nvtx_work = std::move(nvtx.thread);
  a.nvtx_process = std::move(nvtx.process);
  return a;
}

namespace {

// The aggregates of the capture open in `reader` as the rows db stores, and whether the capture
// needs the summary tables added first (db::summary_tables_to_add).
db::SummaryAggregateRows aggregate_rows(const db::Reader& reader, bool& add_tables) {
  add_tables = db::summary_tables_to_add(reader, reader.path());
  const StoredAggregates a = compute_aggregates(reader);
  db::SummaryAggregateRows rows;
  rows.kernels = stored_rows(a.kernels_by_demangled_name);
  if (a.kernels_by_short_name) rows.kernels_short = stored_rows(*a.kernels_by_short_name);
  rows.calls = stored_rows(a.api_by_name);
  for (const auto& [id, w] : a.nvtx_work) rows.nvtx_work.push_back({id, w.kernels, w.gpu_ns});
  for (const auto& [id, w] : *a.nvtx_process) {
    rows.nvtx_process.push_back({id, w.kernels, w.gpu_ns});
  }
  return rows;
}

}  // namespace

void store_summary_aggregates(const std::string& path) {
  db::SummaryAggregateRows rows;
  bool add_tables = false;
  {
    const db::Reader reader(path);
    rows = aggregate_rows(reader, add_tables);
  }
  db::Connection c(path, db::Connection::Mode::ReadWrite);
  db::write_summary_aggregates(c, add_tables, rows);
}

void store_summary_aggregates(db::Reader& reader) {
  bool add_tables = false;
  const db::SummaryAggregateRows rows = aggregate_rows(reader, add_tables);
  db::write_summary_aggregates(reader.connection(), add_tables, rows);
}

PreparedStore prepare_summary_aggregates(const std::string& path) {
  return prepare_summary_aggregates(db::Reader(path, db::TimestampCheck::DeferLargeTables));
}

PreparedStore prepare_summary_aggregates(const db::Reader& reader) {
  bool add_tables = false;
  auto rows = std::make_shared<const db::SummaryAggregateRows>(aggregate_rows(reader, add_tables));
  return [add_tables, rows](db::Reader& target) {
    db::write_summary_aggregates(target.connection(), add_tables, *rows);
  };
}

std::optional<StoredAggregates> load_summary_aggregates(const db::Reader& reader) {
  if (!db::has_summary_tables(reader)) return std::nullopt;
  SourceState stored[std::size(kSourceTables)];
  int found = 0;
  for (const db::SummarySource& source : db::read_summary_sources(reader)) {
    for (std::size_t i = 0; i < std::size(kSourceTables); ++i) {
      if (source.table == kSourceTables[i]) {
        stored[i] = {source.row_count, source.max_id};
        ++found;
      }
    }
  }
  if (found != static_cast<int>(std::size(kSourceTables))) return std::nullopt;
  // The rows still those the aggregates came from: same largest id (rows are only appended) and,
  // for the NVTX ranges, the same count of ended ranges as stored projections.
  for (std::size_t i = 0; i < std::size(kSourceTables); ++i) {
    if (db::max_row_id(reader, kSourceTables[i]) != stored[i].max_id) return std::nullopt;
  }
  StoredAggregates a;
  auto kernels = load_durations(reader, "kernel", stored[0].rows);
  auto calls = load_durations(reader, "api_call", stored[1].rows);
  if (!kernels || !calls) return std::nullopt;
  a.kernels_by_demangled_name = std::move(*kernels);
  a.api_by_name = std::move(*calls);
  // Optional: a capture stored before them has none (counts 0 != rows unless it has no kernel).
  a.kernels_by_short_name = load_durations(reader, "kernel_short", stored[0].rows);
  auto w = db::summary_nvtx_work(reader);
  if (!load_range_work(w, a.nvtx_work)) return std::nullopt;
  std::unordered_map<std::int64_t, RangeWork> process;
  bool process_ok = false;
  if (db::has_summary_nvtx_process(reader)) {
    auto p = db::summary_nvtx_process(reader);
    process_ok = load_range_work(p, process);
  }
  std::size_t ended = 0;
  auto ranges = db::ended_nvtx_ranges(reader, /*ids_only=*/true);
  for (auto r = ranges.next(); r; r = ranges.next(), ++ended) {
    if (a.nvtx_work.count(r->id) == 0) return std::nullopt;
    process_ok = process_ok && process.count(r->id) != 0;
  }
  if (a.nvtx_work.size() != ended) return std::nullopt;
  // The process projection is kept only when complete too (a capture stored before the table
  // has it empty: every ended range would be missing).
  if (process_ok && process.size() == ended) a.nvtx_process = std::move(process);
  return a;
}

}  // namespace fuselens::analyzer
