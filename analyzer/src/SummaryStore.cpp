#include "fuselens/analyzer/SummaryStore.h"

#include <cmath>
#include <string_view>

#include "fuselens/analyzer/CompareProjection.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

// The tables the stored aggregates come from, as summary_source names them.
constexpr std::string_view kSourceTables[] = {"kernel", "api_call", "nvtx_range"};

struct SourceState {
  std::int64_t rows = 0;
  std::int64_t max_id = 0;
};

SourceState source_state(const db::Connection& c, std::string_view table) {
  const std::string t(table);
  // MAX(id) of an INTEGER PRIMARY KEY is one b-tree descent; COUNT(*) reads the smallest index
  // of the table, about 0.1 s per ten million rows on the 2-core development machine.
  return {c.query_int("SELECT COUNT(*) FROM " + t), c.query_int("SELECT COALESCE(MAX(id), 0) FROM " + t)};
}

bool plausible(const DurationStats& s) {
  return s.count >= 1 && s.min_ns >= 0 && s.min_ns <= s.max_ns && s.max_ns < db::kMaxTimestampNs &&
         s.total_ns >= s.max_ns && std::isfinite(s.median_ns) &&
         s.median_ns >= static_cast<double>(s.min_ns) &&
         s.median_ns <= static_cast<double>(s.max_ns) && std::isfinite(s.stddev_ns) &&
         s.stddev_ns >= 0;
}

/// Reads summary_duration rows of `source`; nullopt when one is implausible or the counts do not
/// add up to `rows`.
std::optional<StatsById> load_durations(const db::Reader& reader, std::string_view source,
                                        std::int64_t rows) {
  auto s = reader.prepare(
      "SELECT name_id, count, total_ns, min_ns, max_ns, median_ns, stddev_ns FROM summary_duration"
      " WHERE source = ? ORDER BY name_id");
  s.bind(1, source);
  StatsById out;
  std::int64_t counted = 0;
  while (s.step()) {
    DurationStats d;
    d.count = s.int64(1);
    d.total_ns = s.int64(2);
    d.min_ns = s.int64(3);
    d.max_ns = s.int64(4);
    d.median_ns = s.real(5);
    d.stddev_ns = s.real(6);
    if (!plausible(d) || __builtin_add_overflow(counted, d.count, &counted)) return std::nullopt;
    d.avg_ns = static_cast<double>(static_cast<long double>(d.total_ns) / static_cast<long double>(d.count));
    out.emplace_back(s.int64(0), d);
  }
  if (counted != rows) return std::nullopt;
  return out;
}

}  // namespace

StatsById stats_by_id(db::Statement& s) {
  StatsById out;
  bool more = s.step();
  while (more) {
    const std::int64_t id = s.int64(0);
    std::vector<std::int64_t> durations;
    for (; more && s.int64(0) == id; more = s.step()) durations.push_back(s.int64(1));
    out.emplace_back(id, compute_stats(std::move(durations)));
  }
  return out;
}

std::unordered_map<std::int64_t, RangeWork> project_nvtx_ranges(const db::Reader& reader) {
  auto s = reader.prepare(
      "SELECT id, pid, tid, start_ns, end_ns FROM nvtx_range WHERE end_ns IS NOT NULL ORDER BY id");
  std::vector<std::int64_t> ids;
  std::vector<ProjectionWindow> windows;
  while (s.step()) {
    ids.push_back(s.int64(0));
    windows.push_back({s.int64(1), s.int64(2), s.int64(3), s.int64(4)});
  }
  std::unordered_map<std::int64_t, RangeWork> out;
  if (windows.empty()) return out;
  reader.check_table_timestamps("kernel");
  reader.check_table_timestamps("api_call");
  const auto work = project_windows(reader, ProjectedActivity::Kernels, windows);
  for (std::size_t i = 0; i < ids.size(); ++i) out[ids[i]] = {work[i].records, work[i].gpu_ns};
  return out;
}

StoredAggregates compute_aggregates(const db::Reader& reader) {
  reader.check_table_timestamps("kernel");  // once each: the Reader remembers
  reader.check_table_timestamps("api_call");
  StoredAggregates a;
  auto kernels = reader.prepare(
      "SELECT demangled_name_id, end_ns - start_ns FROM kernel ORDER BY demangled_name_id");
  a.kernels_by_demangled_name = stats_by_id(kernels);
  auto calls = reader.prepare("SELECT name_id, end_ns - start_ns FROM api_call ORDER BY name_id");
  a.api_by_name = stats_by_id(calls);
  a.nvtx_work = project_nvtx_ranges(reader);
  return a;
}

namespace {

// The aggregates of the capture open in `reader`, and whether it needs the version-4 tables.
StoredAggregates aggregates_to_store(const db::Reader& reader, bool& add_tables) {
  // A version-3 capture gets the version-4 tables (every CREATE of the schema is IF NOT EXISTS,
  // and versions only add tables); older ones lack other tables too and are left alone.
  add_tables = !reader.has_table("summary_duration");
  if (add_tables && reader.schema_version() != 3) {
    throw db::Error("'" + reader.path() + "' has schema version " +
                    std::to_string(reader.schema_version()) + ": no summary tables to store into");
  }
  return compute_aggregates(reader);
}

void write_aggregates(db::Connection& c, const StoredAggregates& a, bool add_tables) {
  db::in_transaction(c, [&] {
    if (add_tables) c.exec(db::schema_sql());
    c.exec("DELETE FROM summary_source; DELETE FROM summary_duration; DELETE FROM summary_nvtx_work;");
    auto source = c.prepare("INSERT INTO summary_source (table_name, row_count, max_id) VALUES (?, ?, ?)");
    for (const auto table : kSourceTables) {
      const SourceState state = source_state(c, table);
      source.bind(1, table).bind(2, state.rows).bind(3, state.max_id);
      source.run();
    }
    auto duration = c.prepare(
        "INSERT INTO summary_duration (source, name_id, count, total_ns, min_ns, max_ns, median_ns,"
        " stddev_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    auto put = [&](std::string_view name, const StatsById& rows) {
      for (const auto& [id, d] : rows) {
        duration.bind(1, name).bind(2, id).bind(3, d.count).bind(4, d.total_ns).bind(5, d.min_ns);
        duration.bind(6, d.max_ns).bind(7, d.median_ns).bind(8, d.stddev_ns);
        duration.run();
      }
    };
    put("kernel", a.kernels_by_demangled_name);
    put("api_call", a.api_by_name);
    auto work = c.prepare("INSERT INTO summary_nvtx_work (range_id, kernels, gpu_ns) VALUES (?, ?, ?)");
    for (const auto& [id, w] : a.nvtx_work) {
      work.bind(1, id).bind(2, w.kernels).bind(3, w.gpu_ns);
      work.run();
    }
  });
}

}  // namespace

void store_summary_aggregates(const std::string& path) {
  StoredAggregates a;
  bool add_tables = false;
  {
    const db::Reader reader(path);
    a = aggregates_to_store(reader, add_tables);
  }
  db::Connection c(path, db::Connection::Mode::ReadWrite);
  write_aggregates(c, a, add_tables);
}

void store_summary_aggregates(db::Reader& reader) {
  bool add_tables = false;
  const StoredAggregates a = aggregates_to_store(reader, add_tables);
  write_aggregates(reader.connection(), a, add_tables);
}

std::optional<StoredAggregates> load_summary_aggregates(const db::Reader& reader) {
  for (const char* table : {"summary_source", "summary_duration", "summary_nvtx_work"}) {
    if (!reader.has_table(table)) return std::nullopt;
  }
  SourceState stored[std::size(kSourceTables)];
  auto s = reader.prepare("SELECT table_name, row_count, max_id FROM summary_source");
  int found = 0;
  while (s.step()) {
    const std::string name = s.text(0);
    for (std::size_t i = 0; i < std::size(kSourceTables); ++i) {
      if (name == kSourceTables[i]) {
        stored[i] = {s.int64(1), s.int64(2)};
        ++found;
      }
    }
  }
  if (found != static_cast<int>(std::size(kSourceTables))) return std::nullopt;
  // The rows still those the aggregates came from: same largest id (rows are only appended) and,
  // for the NVTX ranges, the same count of ended ranges as stored projections.
  for (std::size_t i = 0; i < std::size(kSourceTables); ++i) {
    const std::string t(kSourceTables[i]);
    if (reader.query_int("SELECT COALESCE(MAX(id), 0) FROM " + t) != stored[i].max_id) return std::nullopt;
  }
  StoredAggregates a;
  auto kernels = load_durations(reader, "kernel", stored[0].rows);
  auto calls = load_durations(reader, "api_call", stored[1].rows);
  if (!kernels || !calls) return std::nullopt;
  a.kernels_by_demangled_name = std::move(*kernels);
  a.api_by_name = std::move(*calls);
  auto w = reader.prepare("SELECT range_id, kernels, gpu_ns FROM summary_nvtx_work");
  while (w.step()) {
    const RangeWork work{w.int64(1), w.int64(2)};
    if (work.kernels < 0 || work.gpu_ns < 0) return std::nullopt;
    a.nvtx_work[w.int64(0)] = work;
  }
  std::size_t ended = 0;
  auto ranges = reader.prepare("SELECT id FROM nvtx_range WHERE end_ns IS NOT NULL");
  for (; ranges.step(); ++ended) {
    if (a.nvtx_work.count(ranges.int64(0)) == 0) return std::nullopt;
  }
  if (a.nvtx_work.size() != ended) return std::nullopt;
  return a;
}

}  // namespace fuselens::analyzer
