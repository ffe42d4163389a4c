#include "fuselens/db/SummaryStore.h"

#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

/// kSummarySourceTables[i] as an owned name, refusing any other table (names go into SQL text).
std::string source_table(std::string_view table) {
  for (const auto t : kSummarySourceTables) {
    if (t == table) return std::string(t);
  }
  throw Error("not a summary source table: '" + std::string(table) + "'");
}

}  // namespace

bool summary_tables_to_add(const Reader& reader, const std::string& path) {
  // A version-3 capture gets the version-4 tables (every table of the schema is created IF NOT
  // EXISTS, and versions only add tables); older ones lack other tables too and are left alone.
  const bool add_tables = !reader.has_table("summary_duration");
  if (add_tables && reader.schema_version() != 3) {
    throw Error("'" + path + "' has schema version " + std::to_string(reader.schema_version()) +
                ": no summary tables to store into");
  }
  return add_tables;
}

void write_summary_aggregates(Connection& c, bool add_tables, const SummaryAggregateRows& rows) {
  in_transaction(c, [&] {
    if (add_tables) c.exec(schema_sql());
    c.exec(
        "DELETE FROM summary_source; DELETE FROM summary_duration; DELETE FROM summary_nvtx_work;");
    auto source =
        c.prepare("INSERT INTO summary_source (table_name, row_count, max_id) VALUES (?, ?, ?)");
    for (const auto table : kSummarySourceTables) {
      const std::string t(table);
      // MAX(id) of an INTEGER PRIMARY KEY is one b-tree descent; COUNT(*) reads the smallest index
      // of the table, about 0.1 s per ten million rows on the 2-core development machine.
      source.bind(1, table)
          .bind(2, c.query_int("SELECT COUNT(*) FROM " + t))
          .bind(3, c.query_int("SELECT COALESCE(MAX(id), 0) FROM " + t));
      source.run();
    }
    auto duration = c.prepare(
        "INSERT INTO summary_duration (source, name_id, count, total_ns, min_ns, max_ns, median_ns,"
        " stddev_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    auto put = [&](std::string_view name, const std::vector<StoredDuration>& durations) {
      for (const auto& d : durations) {
        duration.bind(1, name)
            .bind(2, d.name_id)
            .bind(3, d.count)
            .bind(4, d.total_ns)
            .bind(5, d.min_ns);
        duration.bind(6, d.max_ns).bind(7, d.median_ns).bind(8, d.stddev_ns);
        duration.run();
      }
    };
    put("kernel", rows.kernels);
    put("kernel_short", rows.kernels_short);
    put("api_call", rows.calls);
    auto work =
        c.prepare("INSERT INTO summary_nvtx_work (range_id, kernels, gpu_ns) VALUES (?, ?, ?)");
    for (const auto& w : rows.nvtx_work) {
      work.bind(1, w.range_id).bind(2, w.kernels).bind(3, w.gpu_ns);
      work.run();
    }
    // A capture written before summary_nvtx_process gets it (every statement of the schema is
    // IF NOT EXISTS, and it holds no index: the newer tables are added, nothing else changes).
    auto has_process = c.prepare(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'summary_nvtx_process'");
    if (!has_process.step()) c.exec(schema_sql());
    c.exec("DELETE FROM summary_nvtx_process");
    auto process =
        c.prepare("INSERT INTO summary_nvtx_process (range_id, kernels, gpu_ns) VALUES (?, ?, ?)");
    for (const auto& w : rows.nvtx_process) {
      process.bind(1, w.range_id).bind(2, w.kernels).bind(3, w.gpu_ns);
      process.run();
    }
  });
}

bool has_summary_tables(const Reader& reader) {
  if (reader.restricted()) return false;  // the aggregates describe the whole capture
  for (const char* table : {"summary_source", "summary_duration", "summary_nvtx_work"}) {
    if (!reader.has_table(table)) return false;
  }
  return true;
}

std::vector<SummarySource> read_summary_sources(const Reader& reader) {
  auto s = reader.prepare("SELECT table_name, row_count, max_id FROM summary_source");
  std::vector<SummarySource> out;
  while (s.step()) out.push_back({s.text(0), s.int64(1), s.int64(2)});
  return out;
}

std::int64_t max_row_id(const Reader& reader, std::string_view table) {
  return reader.query_int("SELECT COALESCE(MAX(id), 0) FROM " + source_table(table));
}

Cursor<StoredDuration> summary_durations(const Reader& reader, std::string_view source) {
  auto stmt = reader.prepare(
      "SELECT name_id, count, total_ns, min_ns, max_ns, median_ns, stddev_ns FROM summary_duration"
      " WHERE source = ? ORDER BY name_id");
  stmt.bind(1, source);
  return Cursor<StoredDuration>(std::move(stmt), [](const Statement& s, StoredDuration& d) {
    detail::read_columns(s, d, 0, &StoredDuration::name_id, &StoredDuration::count,
                         &StoredDuration::total_ns, &StoredDuration::min_ns,
                         &StoredDuration::max_ns, &StoredDuration::median_ns,
                         &StoredDuration::stddev_ns);
  });
}

namespace {

// The rows of a table of (range_id, kernels, gpu_ns): `sql` selects them.
Cursor<StoredRangeWork> range_work(const Reader& reader, const char* sql) {
  return Cursor<StoredRangeWork>(reader.prepare(sql), [](const Statement& s, StoredRangeWork& w) {
    detail::read_columns(s, w, 0, &StoredRangeWork::range_id, &StoredRangeWork::kernels,
                         &StoredRangeWork::gpu_ns);
  });
}

}  // namespace

Cursor<StoredRangeWork> summary_nvtx_work(const Reader& reader) {
  return range_work(reader, "SELECT range_id, kernels, gpu_ns FROM summary_nvtx_work");
}

bool has_summary_nvtx_process(const Reader& reader) {
  return !reader.restricted() && reader.has_table("summary_nvtx_process");
}

Cursor<StoredRangeWork> summary_nvtx_process(const Reader& reader) {
  return range_work(reader, "SELECT range_id, kernels, gpu_ns FROM summary_nvtx_process");
}

}  // namespace fuselens::db
