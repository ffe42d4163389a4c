#include "fuselens/db/AnalysisStore.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

bool without_rowid(std::string_view table) {
  return table == "api_context" || table == "kernel_arg" || table == "kernel_metric";
}

bool has_main_table(const Reader& c, std::string_view table) {
  auto s = c.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?");
  s.bind(1, table);
  return s.step();
}

// The fingerprint of each of `tables` (names from the constant lists of AnalysisStore.h only:
// they go into SQL text).
template <std::size_t N>
TableFingerprints fingerprints_of(const Reader& c, const std::string_view (&tables)[N]) {
  TableFingerprints out;
  for (const auto table : tables) {
    const std::string t(table);  // from the constant list above only: names go into SQL text
    std::int64_t value = 0;      // absent reads as empty: storing may add the newer tables
    if (has_main_table(c, table)) {
      value = without_rowid(table) ? c.query_int("SELECT COUNT(*) FROM main." + t)
                                   : c.query_int("SELECT COALESCE(MAX(rowid), 0) FROM main." + t);
    }
    out.emplace_back(t, value);
  }
  return out;
}

}  // namespace

TableFingerprints table_fingerprints(const Reader& c) {
  return fingerprints_of(c, kAnalysisSourceTables);
}

bool analysis_tables_to_add(const Reader& reader) {
  // Versions only add tables and every table of the schema is created IF NOT EXISTS: a capture
  // of version 4 or later gets the version-10 tables; older ones lack more and are left alone.
  const bool add =
      !reader.has_table("stored_analysis") || !reader.has_table("stored_analysis_source");
  if (add && reader.schema_version() < 4) {
    throw Error("'" + reader.path() + "' has schema version " +
                std::to_string(reader.schema_version()) + ": no tables to store analyses into");
  }
  return add;
}

void write_stored_analyses(Connection& c, bool add_tables, const TableFingerprints& sources,
                           const std::vector<StoredAnalysisRow>& rows) {
  in_transaction(c, [&] {
    if (add_tables) c.exec(schema_sql());
    c.exec("DELETE FROM main.stored_analysis_source; DELETE FROM main.stored_analysis;");
    auto source = c.prepare(
        "INSERT INTO main.stored_analysis_source (table_name, fingerprint) VALUES (?, ?)");
    for (const auto& [table, value] : sources) {
      source.bind(1, table).bind(2, value);
      source.run();
    }
    auto row = c.prepare(
        "INSERT INTO main.stored_analysis (analysis, window_spec, window_key, body) VALUES (?, ?, "
        "?, ?)");
    for (const auto& r : rows) {
      row.bind(1, r.analysis).bind(2, r.window_spec).bind(3, r.window_key).bind(4, r.body);
      row.run();
    }
  });
}

bool has_stored_analyses(const Reader& reader) {
  return !reader.restricted() && reader.has_table("stored_analysis") &&
         reader.has_table("stored_analysis_source");
}

std::optional<TableFingerprints> read_stored_fingerprints(const Reader& reader) {
  auto s = reader.prepare(
      "SELECT table_name, fingerprint, typeof(table_name), typeof(fingerprint) FROM "
      "main.stored_analysis_source ORDER BY table_name");
  TableFingerprints out;
  std::set<std::string> seen;
  while (s.step()) {
    if (s.raw_text(2) != "text" || s.raw_text(3) != "integer") return std::nullopt;
    std::string table = s.raw_text(0);
    if (!seen.insert(table).second) return std::nullopt;
    out.emplace_back(std::move(table), s.int64(1));
  }
  return out;
}

std::optional<StoredAnalysisRow> read_stored_analysis(const Reader& reader,
                                                      std::string_view analysis,
                                                      std::string_view window_spec,
                                                      std::size_t max_body_bytes) {
  auto s = reader.prepare(
      "SELECT window_key, body, typeof(window_key), typeof(body), length(CAST(body AS BLOB)) FROM "
      "main.stored_analysis WHERE analysis = ? AND window_spec = ?");
  s.bind(1, analysis).bind(2, window_spec);
  if (!s.step()) return std::nullopt;
  if (s.raw_text(2) != "text" || s.raw_text(3) != "text") return std::nullopt;
  if (s.int64(4) < 0 || static_cast<std::uint64_t>(s.int64(4)) > max_body_bytes)
    return std::nullopt;
  StoredAnalysisRow row{std::string(analysis), std::string(window_spec), s.raw_text(0),
                        s.raw_text(1)};
  if (s.step()) return std::nullopt;  // a table without its key: two rows for one result
  return row;
}

bool stored_analyses_fresh(const Reader& reader) {
  if (!has_stored_analyses(reader)) return false;
  const auto stored = read_stored_fingerprints(reader);
  if (!stored) return false;
  auto now = table_fingerprints(reader);
  std::sort(now.begin(), now.end());  // read_stored_fingerprints orders by table name
  return *stored == now;
}

bool extent_sources_fresh(const Reader& reader) {
  if (!has_stored_analyses(reader)) return false;
  const auto stored = read_stored_fingerprints(reader);
  if (!stored) return false;
  for (const auto& [table, value] : fingerprints_of(reader, kExtentSourceTables)) {
    const auto at = std::find_if(stored->begin(), stored->end(),
                                 [&t = table](const auto& s) { return s.first == t; });
    if (at == stored->end() || at->second != value) return false;
  }
  return true;
}

std::string extent_body(std::int64_t first_ns, std::int64_t last_ns) {
  return std::to_string(first_ns) + ' ' + std::to_string(last_ns);
}

std::optional<std::pair<std::int64_t, std::int64_t>> stored_capture_extent(const Reader& reader) {
  if (!has_stored_analyses(reader)) return std::nullopt;
  const auto row = read_stored_analysis(reader, kExtentAnalysis, "", 64);
  if (!row || !row->window_key.empty() || !extent_sources_fresh(reader)) return std::nullopt;
  const std::string& b = row->body;
  std::int64_t first = -1, last = -1;
  const char* end = b.data() + b.size();
  auto r = std::from_chars(b.data(), end, first);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != ' ') return std::nullopt;
  r = std::from_chars(r.ptr + 1, end, last);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  if (first < 0 || last < first || last > kMaxTimestampNs) return std::nullopt;
  return std::make_pair(first, last);
}

}  // namespace fuselens::db
