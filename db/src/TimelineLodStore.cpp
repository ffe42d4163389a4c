#include "fuselens/db/TimelineLodStore.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "fuselens/db/AnalysisStore.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

/// kTimelineLodSourceTables[i] as an owned name, refusing any other table (names go into SQL).
std::string source_table(std::string_view table) {
  for (const auto t : kTimelineLodSourceTables) {
    if (t == table) return std::string(t);
  }
  throw Error("not a timeline level-of-detail source table: '" + std::string(table) + "'");
}

constexpr const char* kCreateTables =
    "CREATE TABLE IF NOT EXISTS timeline_lod_source (table_name TEXT PRIMARY KEY, max_id INTEGER "
    "NOT NULL);"
    "CREATE TABLE IF NOT EXISTS timeline_lod (lane_kind INTEGER NOT NULL, device_id INTEGER NOT "
    "NULL, stream_id INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL, depth INTEGER "
    "NOT NULL, level INTEGER NOT NULL, begin_ns INTEGER NOT NULL, bucket_ns INTEGER NOT NULL, "
    "item_count INTEGER NOT NULL, first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL, "
    "max_duration_ns INTEGER NOT NULL, busy BLOB NOT NULL, starts BLOB NOT NULL, PRIMARY KEY "
    "(lane_kind, device_id, stream_id, pid, tid, depth, level)) WITHOUT ROWID;";

/// Little-endian int64 values as bytes (the hosts FuseLens runs on are little-endian).
std::string to_bytes(const std::vector<std::int64_t>& values) {
  std::string out(values.size() * sizeof(std::int64_t), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw Error(std::string(what) + ": " + sqlite3_errmsg(db));
  }
}

/// A prepared statement of the raw API, for blobs (Statement binds and reads no blobs).
class RawStatement {
 public:
  RawStatement(sqlite3* db, const char* sql) : db_(db) {
    check(sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr), db, "timeline_lod");
  }
  ~RawStatement() { sqlite3_finalize(stmt_); }
  RawStatement(const RawStatement&) = delete;
  RawStatement& operator=(const RawStatement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    check(rc, db_, "timeline_lod");
    return rc == SQLITE_ROW;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

void write_timeline_lod(Connection& c, const std::vector<StoredLodLevel>& levels) {
  const auto version = c.query_int("PRAGMA user_version");
  const bool has_tables = c.query_int(
                              "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                              "('timeline_lod', 'timeline_lod_source')") == 2;
  if (!has_tables && version != 9) {
    throw Error("'" + c.path() + "' has schema version " + std::to_string(version) +
                ": no timeline level of detail to store into");
  }
  in_transaction(c, [&] {
    if (!has_tables) {
      c.exec(kCreateTables);
      c.exec("PRAGMA user_version = 10");
    }
    c.exec("DELETE FROM timeline_lod_source; DELETE FROM timeline_lod;");
    auto source = c.prepare("INSERT INTO timeline_lod_source (table_name, max_id) VALUES (?, ?)");
    for (const auto table : kTimelineLodSourceTables) {
      // A lean capture's kernel and api_call are views (Layout.h) with their rows' ids: the
      // same largest id that lod_source_max_id reads back through the reader's views.
      const bool present =
          c.prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?")
              .bind(1, table)
              .step();
      const std::string t(table);
      source.bind(1, table).bind(
          2, present ? c.query_int("SELECT COALESCE(MAX(id), 0) FROM " + t) : std::int64_t{0});
      source.run();
    }
    RawStatement insert(c.handle(),
                        "INSERT INTO timeline_lod (lane_kind, device_id, stream_id, pid, tid, "
                        "depth, level, begin_ns, bucket_ns, item_count, first_ns, last_ns, "
                        "max_duration_ns, busy, starts) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& l : levels) {
      if (l.busy_ns.size() != l.starts.size()) throw Error("timeline_lod: busy and starts differ");
      sqlite3_stmt* s = insert.get();
      const std::int64_t ints[] = {
          l.lane_kind, l.device_id, l.stream_id,  l.pid,      l.tid,     l.depth,          l.level,
          l.begin_ns,  l.bucket_ns, l.item_count, l.first_ns, l.last_ns, l.max_duration_ns};
      int i = 1;
      for (const auto v : ints) sqlite3_bind_int64(s, i++, v);
      const std::string busy = to_bytes(l.busy_ns), starts = to_bytes(l.starts);
      sqlite3_bind_blob64(s, i++, busy.data(), busy.size(), SQLITE_TRANSIENT);
      sqlite3_bind_blob64(s, i++, starts.data(), starts.size(), SQLITE_TRANSIENT);
      insert.step();
      sqlite3_reset(s);
      sqlite3_clear_bindings(s);
    }
  });
}

bool has_timeline_lod_tables(const Reader& reader) {
  return reader.query_int(
             "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
             "('timeline_lod', 'timeline_lod_source')") == 2;
}

std::vector<LodSource> read_timeline_lod_sources(const Reader& reader) {
  std::vector<LodSource> out;
  auto s = reader.prepare(
      "SELECT table_name, max_id, typeof(max_id) FROM timeline_lod_source ORDER BY table_name");
  while (s.step()) {
    if (s.text(2) != "integer") {
      throw Error("timeline_lod_source: max_id of '" + s.text(0) + "' is " + s.text(2) +
                  ", not an integer");
    }
    out.push_back({s.text(0), s.int64(1)});
  }
  return out;
}

std::int64_t lod_source_row_count(const Reader& reader) {
  std::int64_t n = 0;
  for (const auto table : kTimelineLodSourceTables) {
    if (!reader.has_table(table)) continue;
    const std::int64_t rows = reader.query_int("SELECT COUNT(*) FROM " + std::string(table));
    n = rows > std::numeric_limits<std::int64_t>::max() - n
            ? std::numeric_limits<std::int64_t>::max()
            : n + rows;
  }
  return n;
}

std::pair<std::int64_t, std::int64_t> timeline_time_span(const Reader& reader) {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  const auto fold = [&](const char* table, const char* start, const char* stop) {
    if (!reader.has_table(table)) return;
    auto s = reader.prepare(std::string("SELECT MIN(") + start + "), MAX(MAX(" + start +
                            ", COALESCE(" + stop + ", " + start + "))) FROM " + table);
    if (s.step() && !s.is_null(0)) {
      begin = std::min(begin, s.int64(0));
      end = std::max(end, s.int64(1));
    }
  };
  // The four large tables' span is the capture's extent where it is stored and fresh (their
  // rows end at or after they start: Reader's timestamp check, which any read of their times
  // runs): a scan of each less. "0 0", a capture without those rows, is read from them again.
  const auto extent = stored_capture_extent(reader);
  if (extent && (extent->first != 0 || extent->second != 0)) {
    begin = extent->first;
    end = extent->second;
  } else {
    for (const char* t : {"kernel", "memcpy", "memset", "api_call"}) fold(t, "start_ns", "end_ns");
  }
  fold("nvtx_range", "start_ns", "end_ns");
  fold("memory_event", "timestamp_ns", "timestamp_ns");
  if (begin > end) begin = end = 0;
  return {begin, end};
}

std::int64_t lod_source_max_id(const Reader& reader, std::string_view table) {
  if (!reader.has_table(table)) return 0;
  return reader.query_int("SELECT COALESCE(MAX(id), 0) FROM " + source_table(table));
}

std::vector<StoredLodLevel> read_timeline_lod(const Reader& reader) {
  constexpr int kInts = 13;
  RawStatement s(const_cast<Reader&>(reader).connection().handle(),
                 "SELECT lane_kind, device_id, stream_id, pid, tid, depth, level, begin_ns, "
                 "bucket_ns, item_count, first_ns, last_ns, max_duration_ns, busy, starts "
                 "FROM timeline_lod ORDER BY lane_kind, device_id, stream_id, pid, tid, depth, "
                 "level");
  std::vector<StoredLodLevel> out;
  static constexpr const char* kNames[] = {
      "lane_kind", "device_id", "stream_id",  "pid",      "tid",     "depth",          "level",
      "begin_ns",  "bucket_ns", "item_count", "first_ns", "last_ns", "max_duration_ns"};
  while (s.step()) {
    sqlite3_stmt* st = s.get();
    const std::string row = "timeline_lod row " + std::to_string(out.size() + 1);
    std::int64_t v[kInts];
    for (int i = 0; i < kInts; ++i) {
      if (sqlite3_column_type(st, i) != SQLITE_INTEGER) {
        throw Error(row + ": " + kNames[i] + " is not an integer");
      }
      v[i] = sqlite3_column_int64(st, i);
    }
    StoredLodLevel l;
    l.lane_kind = v[0];
    l.device_id = v[1];
    l.stream_id = v[2];
    l.pid = v[3];
    l.tid = v[4];
    l.depth = v[5];
    l.level = v[6];
    l.begin_ns = v[7];
    l.bucket_ns = v[8];
    l.item_count = v[9];
    l.first_ns = v[10];
    l.last_ns = v[11];
    l.max_duration_ns = v[12];
    const auto blob = [&](int column, const char* name, std::vector<std::int64_t>& into) {
      if (sqlite3_column_type(st, column) != SQLITE_BLOB) {
        throw Error(row + ": " + name + " is not a blob");
      }
      const auto* data = sqlite3_column_blob(st, column);
      const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(st, column));
      if (bytes % sizeof(std::int64_t) != 0) {
        throw Error(row + ": " + name + " holds " + std::to_string(bytes) +
                    " bytes, not a whole number of int64");
      }
      into.resize(bytes / sizeof(std::int64_t));
      if (bytes != 0) std::memcpy(into.data(), data, bytes);
    };
    blob(13, "busy", l.busy_ns);
    blob(14, "starts", l.starts);
    if (l.busy_ns.size() != l.starts.size()) {
      throw Error(row + ": busy and starts have different bucket counts");
    }
    out.push_back(std::move(l));
  }
  return out;
}

Cursor<LodItem> lod_gpu_items(const Reader& reader) {
  std::string sql;
  for (const char* table : {"kernel", "memcpy", "memset"}) {
    if (!reader.has_table(table)) continue;
    if (!sql.empty()) sql += " UNION ALL ";
    sql += std::string("SELECT device_id, stream_id, pid, start_ns, end_ns FROM ") + table;
  }
  if (sql.empty()) sql = "SELECT 0, 0, 0, 0, 0 WHERE 0";
  return Cursor<LodItem>(reader.prepare(sql), [](const Statement& s, LodItem& r) {
    detail::read_columns(s, r, 0, &LodItem::device_id, &LodItem::stream_id, &LodItem::pid,
                         &LodItem::start_ns, &LodItem::end_ns);
  });
}

Cursor<LodItem> lod_api_items(const Reader& reader) {
  return Cursor<LodItem>(reader.prepare("SELECT pid, tid, start_ns, end_ns FROM api_call "
                                        "ORDER BY pid, tid, start_ns, end_ns DESC"),
                         [](const Statement& s, LodItem& r) {
                           detail::read_columns(s, r, 0, &LodItem::pid, &LodItem::tid,
                                                &LodItem::start_ns, &LodItem::end_ns);
                         });
}

}  // namespace fuselens::db
