#include "fuselens/db/Reader.h"

#include <sqlite3.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "fuselens/db/Cursor.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Printable.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

void default_notice(const std::string& line) { std::cerr << "note: " << line << '\n'; }
NoticeHandler g_notice = default_notice;

/// The first `n` bytes of the file at `path` ("" when it cannot be read).
std::string head(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return bytes;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

/// A rollback journal that SQLite would replay: non-empty, starting with the journal magic
/// (sqlite.org/fileformat2.html#the_rollback_journal; a journal whose header was zeroed is
/// finished).
bool has_hot_journal(const std::string& path) {
  static constexpr unsigned char kMagic[] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
  const std::string bytes = head(path + "-journal", sizeof kMagic);
  return bytes.size() == sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

/// Opens the capture at `path` for reading (issue 22):
/// - in WAL mode (file format bytes 18-19 = 2) with no -wal and no -shm beside it, immutable, so
///   that reading creates neither (SQLite makes both to read a WAL database, even one whose
///   -wal is empty, and cannot in a read-only directory: the capture then read as "not a FuseLens
///   capture");
/// - with a hot rollback journal (a writer killed mid-transaction, e.g. prof-run while storing
///   the summary's aggregates): rolled back as SQLite does on open when the file and its folder
///   are writable; otherwise opened immutable, the journal ignored. Either way one notice says so.
// `notices` false: for a second reader of a file already opened (Reader::twin), which says
// nothing again and leaves a hot journal as it is (read immutable, as when it cannot be rolled
// back).
Connection open_checked(const std::string& path, bool notices = true) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("'" + path + "': no such file");
  if (!S_ISREG(st.st_mode)) throw Error("'" + path + "' is not a regular file");
  if (st.st_size == 0) throw Error("'" + path + "' is empty, not a FuseLens capture");
  const std::string header = head(path, 100);
  const bool sqlite = header.size() == 100 && header.rfind("SQLite format 3", 0) == 0;
  const bool wal = sqlite && header[18] == 2 && header[19] == 2;
  if (wal && !exists(path + "-wal") && !exists(path + "-shm")) {
    return Connection(path, Connection::Mode::Immutable);
  }
  if (sqlite && !wal && has_hot_journal(path)) {
    if (!notices) return Connection(path, Connection::Mode::Immutable);
    const std::string folder = std::filesystem::path(path).parent_path().string();
    if (::access(path.c_str(), W_OK) == 0 &&
        ::access(folder.empty() ? "." : folder.c_str(), W_OK) == 0) {
      try {
        Connection writer(path, Connection::Mode::ReadWrite);
        (void)writer.query_int("SELECT COUNT(*) FROM sqlite_master");  // SQLite rolls back here
      } catch (const Error&) {
        // Left to the read-only open below, which reports what it finds.
      }
      if (!has_hot_journal(path)) {
        g_notice(
            "'" + path +
            "' held a hot rollback journal (a writer was killed mid-transaction, e.g. prof-run "
            "while storing the summary's aggregates): the unfinished transaction was rolled "
            "back, the capture is as last committed");
        return Connection(path, Connection::Mode::ReadOnly);
      }
    }
    g_notice("'" + path +
             "' has a hot rollback journal (a writer was killed mid-transaction) that cannot be "
             "rolled back here (no write access): the journal is ignored and the capture read as "
             "it is, which may hold part of the unfinished transaction");
    return Connection(path, Connection::Mode::Immutable);
  }
  return Connection(path, Connection::Mode::ReadOnly);
}

/// The command line, which Writer::create stores as a JSON array of strings, parsed with
/// nlohmann-json; each argument in its printable form (Printable.h). Text that is not such an
/// array (a damaged capture) gives no arguments; an element that is not a string is skipped.
std::vector<std::string> parse_json_array(const std::string& text) {
  std::vector<std::string> out;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) return out;
  for (const auto& item : doc) {
    if (item.is_string()) out.push_back(printable(item.get_ref<const std::string&>()));
  }
  return out;
}

// Timed tables and their time columns: (table, start column, end column or nullptr for a point
// in time, whether end may be NULL).
struct TimedTable {
  const char* table;
  const char* start;
  const char* end;
  bool end_nullable;
};
constexpr TimedTable kTimedTables[] = {
    {"kernel", "start_ns", "end_ns", false},       {"memcpy", "start_ns", "end_ns", false},
    {"memset", "start_ns", "end_ns", false},       {"api_call", "start_ns", "end_ns", false},
    {"sync_event", "start_ns", "end_ns", false},   {"overhead", "start_ns", "end_ns", false},
    {"nvtx_range", "start_ns", "end_ns", true},    {"memory_event", "timestamp_ns", nullptr, false},
    {"nvtx_mark", "timestamp_ns", nullptr, false},
};

}  // namespace

namespace {

/// Checks the timed tables for which `selected(table)` holds (see check_timestamps).
template <typename Selected>
void check_timestamps_of(const Connection& connection, const std::string& path, Selected selected) {
  const std::string limit = std::to_string(kMaxTimestampNs);
  for (const auto& t : kTimedTables) {
    if (!selected(std::string_view(t.table))) continue;
    // Comparisons alone, no typeof(): half the virtual-machine work a row (10 M kernels: 1.7
    // instead of 3.6 s). A NULL fails NOTNULL; a text or blob sorts above every number and fails
    // "< limit"; a real is compared as the number it is, and the cursors read it as the integer
    // toward zero, which keeps 0 <= start <= end < limit.
    const std::string start = t.start;
    std::string bad = "NOT (" + start + " NOTNULL AND " + start + " >= 0 AND " + start + " < " +
                      limit;
    std::string columns = start + ", NULL";
    if (t.end != nullptr) {
      const std::string end = t.end;
      const std::string ok_end =
          end + " NOTNULL AND " + end + " >= " + start + " AND " + end + " < " + limit;
      bad += t.end_nullable ? " AND (" + end + " IS NULL OR (" + ok_end + "))" : " AND " + ok_end;
      columns = start + ", " + end;
    }
    bad += ")";
    // A table, or the reader's TEMP view of that name, which shadows it: in a lean capture (the
    // lean tables' rows with the full layout's columns, id its rows' id) and under a window (its
    // rows: a view has no rowid to name them by).
    auto exists = connection.prepare(
        "SELECT 'id' FROM temp.sqlite_master WHERE type = 'view' AND name = ?1 UNION ALL "
        "SELECT 'rowid' FROM main.sqlite_master WHERE type = 'table' AND name = ?1");
    exists.bind(1, std::string_view(t.table));
    if (!exists.step()) continue;  // absent in older schema versions: nothing to check
    auto s = connection.prepare("SELECT " + exists.text(0) + ", " + columns + " FROM " + t.table +
                                " WHERE " + bad + " LIMIT 1");
    if (!s.step()) continue;
    auto value = [&](int i) { return s.is_null(i) ? std::string("NULL") : s.text(i); };
    std::string what =
        std::string(t.table) + " row " + s.text(0) + " has " + t.start + " " + value(1);
    if (t.end != nullptr) what += " and " + std::string(t.end) + " " + value(2);
    throw Error("'" + path + "' holds an implausible timestamp: " + what +
                " (times must satisfy 0 <= start <= end < 2^62 ns): the capture is damaged or was"
                " not written by FuseLens");
  }
}

/// The kDeferredTables index whose times a read of `table`.`column` is, or -1. `view`: the view
/// whose expansion makes the read (SQLite's authorizer reports every column of a view's
/// definition when a statement names the view, whatever the statement reads of it): the reader's
/// own views named kernel and api_call (a lean capture's, a window's) are left out, so that only
/// what the statement itself reads of them counts; reads inside any other view (the schema's
/// kernel_v, ...) count, every column of it.
int deferred_read(const char* table, const char* column, const char* view) {
  if (!table || !column) return -1;
  if (view) {
    const std::string_view v(view);
    if (v == "kernel" || v == "api_call" || v == "fl_lean_kernel" || v == "fl_lean_api_call") {
      return -1;
    }
  }
  const std::string_view t(table), c(column);
  const bool times = c == "start_ns" || c == "end_ns" || c == "duration_ns";
  if ((t == "kernel" || t == "fl_lean_kernel" || t == "kernel_lean") && times) return 0;
  if (t == "kernel_config" && c == "base_ns") return 0;
  if ((t == "api_call" || t == "fl_lean_api_call" || t == "api_call_lean") && times) return 1;
  if (t == "api_config" && c == "base_ns") return 1;
  return -1;
}
static_assert(std::size(kDeferredTables) == 2 && kDeferredTables[0] == "kernel" &&
              kDeferredTables[1] == "api_call");

bool deferrable(std::string_view table) {
  for (const auto t : kDeferredTables) {
    if (t == table) return true;
  }
  return false;
}

/// Runs `check` and words its errors as the constructor's: the first line names the file.
template <typename Check>
void checked(const std::string& path, Check check) {
  try {
    check();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("'" + path + "' holds", 0) == 0) throw;
    throw Error("'" + path + "' is corrupt: " + what);
  }
}

}  // namespace

void check_sizes(const Connection& connection, const std::string& path) {
  const std::string limit = std::to_string(kMaxSizeBytes);
  for (const char* table : {"memcpy", "memset", "memory_event"}) {
    auto exists =
        connection.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    exists.bind(1, std::string_view(table));
    if (!exists.step()) continue;
    auto s = connection.prepare(
        "SELECT rowid, bytes FROM " + std::string(table) +
        " WHERE NOT (typeof(bytes) = 'integer' AND bytes >= 0 AND bytes < " + limit + ") LIMIT 1");
    if (!s.step()) continue;
    throw Error("'" + path + "' holds an implausible size: " + table + " row " + s.text(0) +
                " has bytes " + (s.is_null(1) ? std::string("NULL") : s.text(1)) +
                " (sizes must satisfy 0 <= bytes < 2^50): the capture is damaged or was not "
                "written by FuseLens");
  }
}

void set_notice_handler(NoticeHandler handler) {
  g_notice = handler != nullptr ? handler : default_notice;
}

namespace {

void check_strings(const Connection& connection, const std::string& path) {
  auto exists =
      connection.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'strings'");
  if (!exists.step()) return;
  auto s = connection.prepare(
      "SELECT id, length(CAST(value AS BLOB)) FROM strings WHERE length(CAST(value AS BLOB)) > " +
      std::to_string(kMaxStringBytes) + " LIMIT 1");
  if (!s.step()) return;
  throw Error("'" + path + "' holds a string of " + s.text(1) + " bytes (strings row " + s.text(0) +
              "; FuseLens reads strings of up to 1 MiB): the capture is damaged or was not "
              "written by FuseLens");
}

}  // namespace

bool is_schema_view(std::string_view name) {
  // The views are those the schema creates: "CREATE VIEW IF NOT EXISTS name AS".
  static constexpr std::string_view kCreate = "CREATE VIEW IF NOT EXISTS ";
  const std::string_view schema = schema_sql();
  for (auto at = schema.find(kCreate); at != std::string_view::npos;
       at = schema.find(kCreate, at + 1)) {
    const auto begin = at + kCreate.size();
    const auto end = schema.find(' ', begin);
    if (end != std::string_view::npos && schema.substr(begin, end - begin) == name) return true;
  }
  return false;
}

void check_timestamps(const Connection& connection, const std::string& path) {
  check_timestamps_of(connection, path, [](std::string_view) { return true; });
}

Reader::Reader(const std::string& path, TimestampCheck check) : Reader(open_checked(path), check) {}

Reader::Reader(Connection connection, TimestampCheck check) : connection_(std::move(connection)) {
  if (detail::row_progress_batch() != 0) {
    // A tool shows progress (RowProgressScope, Cursor.h): long statements report that they still
    // run, every 2^20 virtual-machine instructions; the callback never interrupts (returns 0).
    sqlite3_progress_handler(
        connection_.handle(), 1 << 20,
        [](void*) -> int {
          detail::report_still_working();
          return 0;
        },
        nullptr);
  }
  const std::string& path = connection_.path();
  std::int64_t application_id = 0;
  try {
    application_id = connection_.query_int("PRAGMA application_id");
    schema_version_ = static_cast<int>(connection_.query_int("PRAGMA user_version"));
  } catch (const Error& e) {
    throw Error("'" + path + "' is not a FuseLens capture (not an SQLite database, or corrupt: " +
                e.what() + ")");
  }
  if (application_id != kApplicationId) {
    throw Error("'" + path + "' is not a FuseLens capture (SQLite application id " +
                std::to_string(application_id) + ")");
  }
  if (schema_version_ > kSchemaVersion) {
    throw Error("'" + path + "' was written with capture schema version " +
                std::to_string(schema_version_) + "; this FuseLens reads up to version " +
                std::to_string(kSchemaVersion) + ": upgrade FuseLens");
  }
  if (schema_version_ < 1) throw Error("'" + path + "' has no FuseLens schema version");
  try {
    // FuseLens writes tables, indexes and the schema's named views (db/schema.sql, "Views"),
    // which no analysis reads; any other view, a trigger or anything else in the main schema
    // could stand in for a table and bypass the checks below (issue 22).
    auto other = connection_.prepare(
        "SELECT type, name FROM sqlite_master WHERE type NOT IN ('table', 'index')");
    const bool lean = capture_layout(connection_) == TraceLayout::Lean;
    while (other.step()) {
      if (other.text(0) == "view" && is_schema_view(other.text(1))) continue;
      // A lean capture's views kernel and api_call: shadowed below by this reader's own.
      if (lean && other.text(0) == "view" &&
          (other.text(1) == "kernel" || other.text(1) == "api_call"))
        continue;
      throw Error("'" + path + "' holds a " + other.text(0) + " '" + other.text(1) +
                  "', which FuseLens never writes: the capture is damaged or was not written by "
                  "FuseLens");
    }
    if (lean) {
      // The lean tables read as the full layout's (Layout.h) through TEMP views, which SQLite
      // finds before the file's views of the same names: every query of db/ reads them
      // unchanged. Two levels so that restrict_to can replace kernel and api_call by windows
      // over fl_lean_kernel and fl_lean_api_call.
      lean_ = true;
      connection_.exec(
          lean_view_sql("CREATE TEMP VIEW", "fl_lean_kernel", "fl_lean_api_call", "main."));
      connection_.exec(
          "CREATE TEMP VIEW kernel AS SELECT * FROM temp.fl_lean_kernel;"
          "CREATE TEMP VIEW api_call AS SELECT * FROM temp.fl_lean_api_call;");
    }
  } catch (const Error& e) {
    if (std::string_view(e.what()).rfind("'" + path + "' holds", 0) == 0) throw;
    throw Error("'" + path + "' is corrupt: " + e.what());
  }
  try {
    const std::int64_t runs = connection_.query_int("SELECT COUNT(*) FROM run");
    if (runs == 0) throw Error("'" + path + "' has no run record: the capture is incomplete");
    if (runs != 1) {
      throw Error("'" + path + "' has " + std::to_string(runs) +
                  " run records where a capture has one: the capture is damaged");
    }
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("'" + path + "' has", 0) == 0) throw;
    throw Error("'" + path + "' is corrupt or incomplete: " + what);
  }
  const bool defer = check == TimestampCheck::DeferLargeTables;
  checked(path, [&] {
    check_timestamps_of(connection_, path,
                        [defer](std::string_view table) { return !defer || !deferrable(table); });
  });
  checked(path, [&] {
    check_sizes(connection_, path);
    check_strings(connection_, path);
  });
  deferred_ = defer;
  if (defer) {
    watch_ = std::make_unique<ReadWatch>();
    sqlite3_set_authorizer(
        connection_.handle(),
        [](void* data, int action, const char* table, const char* column, const char*,
           const char* view) -> int {
          auto* watch = static_cast<ReadWatch*>(data);
          if (action != SQLITE_READ || watch->checking) return SQLITE_OK;
          if (const int i = deferred_read(table, column, view); i >= 0) watch->reads[i] = true;
          return SQLITE_OK;
        },
        watch_.get());
  }
}

void Reader::check_table_timestamps(std::string_view table) const {
  if (!deferred_ || !deferrable(table)) return;  // checked by the constructor
  if (!deferred_failure_.empty()) throw Error(deferred_failure_);
  for (std::size_t i = 0; i < std::size(kDeferredTables); ++i) {
    if (kDeferredTables[i] != table || deferred_checked_[i]) continue;
    if (watch_) watch_->checking = true;
    try {
      checked(path(), [&] {
        check_timestamps_of(connection_, path(),
                            [table](std::string_view t) { return t == table; });
      });
    } catch (const Error& e) {
      if (watch_) watch_->checking = false;
      deferred_failure_ = e.what();
      throw;
    }
    if (watch_) watch_->checking = false;
    deferred_checked_[i] = true;
  }
}

Reader Reader::twin() const {
  if (restricted_) throw Error("'" + path() + "': a window's reader has no twin");
  Reader out(open_checked(path(), /*notices=*/false), TimestampCheck::DeferLargeTables);
  out.take_checks(*this);
  out.lean_by_id_ = lean_by_id_;
  return out;
}

void Reader::take_checks(const Reader& twin) const {
  if (!deferred_) return;  // every table was checked by the constructor
  if (deferred_failure_.empty()) deferred_failure_ = twin.deferred_failure_;
  for (std::size_t i = 0; i < std::size(kDeferredTables); ++i) {
    // A twin's constructor that checked every table (deferred_ false) counts as all checked.
    if (!twin.deferred_ || twin.deferred_checked_[i]) deferred_checked_[i] = true;
  }
}

void Reader::run_watched_checks() const {
  if (!watch_) return;
  for (std::size_t i = 0; i < std::size(kDeferredTables); ++i) {
    if (!watch_->reads[i]) continue;
    watch_->reads[i] = false;
    check_table_timestamps(kDeferredTables[i]);
  }
}

Statement Reader::prepare(std::string_view sql) const {
  Statement s = connection_.prepare(sql);
  run_watched_checks();
  return s;
}

Statement Reader::prepare_unwatched(std::string_view sql) const {
  if (!watch_) return connection_.prepare(sql);
  const ReadWatch pending = *watch_;  // reads noted before this statement stay to be checked
  Statement s = connection_.prepare(sql);
  *watch_ = pending;
  return s;
}

std::int64_t Reader::query_int(std::string_view sql) const {
  const Statement check_first = prepare(sql);  // runs the deferred check its reads need
  return connection_.query_int(sql);
}

bool Reader::has_table(std::string_view name) const {
  if (lean_ && (name == "kernel" || name == "api_call")) return true;
  auto s = prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?");
  s.bind(1, name);
  return s.step();
}

RunSummary Reader::run() const {
  auto s = prepare(
      "SELECT command_line, working_directory, host_name, fuselens_version, trace, start_utc_ns,"
      " end_utc_ns, end_reason, exit_status, exit_signal, dropped_records, cuda_processes"
      " FROM run WHERE id = 1");
  RunSummary r;
  if (!s.step()) throw Error("'" + path() + "' has no run record");
  r.info.command_line = parse_json_array(s.raw_text(0));
  r.info.working_directory = s.text(1);
  r.info.host_name = s.text(2);
  r.info.fuselens_version = s.text(3);
  r.info.trace = s.text(4);
  r.info.start_utc_ns = static_cast<std::uint64_t>(s.int64(5));
  r.end.end_utc_ns = s.is_null(6) ? 0 : static_cast<std::uint64_t>(s.int64(6));
  r.end.reason = static_cast<EndReason>(s.int64(7));
  if (!s.is_null(8)) r.end.exit_status = static_cast<int>(s.int64(8));
  if (!s.is_null(9)) r.end.exit_signal = static_cast<int>(s.int64(9));
  r.dropped_records = static_cast<std::uint64_t>(s.int64(10));
  r.cuda_processes = static_cast<int>(s.int64(11));
  if (r.end.reason == EndReason::NotFinalized) {
    // Not finalized: totals were never summed, read them live.
    r.dropped_records = static_cast<std::uint64_t>(
        query_int("SELECT COALESCE(SUM(dropped_records), 0) FROM process"));
    r.cuda_processes = static_cast<int>(query_int("SELECT COUNT(*) FROM process"));
  }
  return r;
}

std::vector<ProcessInfo> Reader::processes() const {
  auto s = prepare(
      "SELECT pid, parent_pid, executable, start_utc_ns, end_utc_ns, clock_offset_ns,"
      " cuda_driver_version, cuda_runtime_version, cupti_version, dropped_records, buffers_used,"
      " records_written FROM process ORDER BY pid");
  std::vector<ProcessInfo> out;
  while (s.step()) {
    ProcessInfo p;
    p.pid = static_cast<std::uint32_t>(s.int64(0));
    p.parent_pid = static_cast<std::uint32_t>(s.int64(1));
    p.executable = s.text(2);
    p.start_utc_ns = static_cast<std::uint64_t>(s.int64(3));
    if (!s.is_null(4)) p.end_utc_ns = static_cast<std::uint64_t>(s.int64(4));
    p.clock_offset_ns = s.int64(5);
    p.cuda_driver_version = static_cast<int>(s.int64(6));
    p.cuda_runtime_version = static_cast<int>(s.int64(7));
    p.cupti_version = static_cast<std::uint32_t>(s.int64(8));
    p.dropped_records = static_cast<std::uint64_t>(s.int64(9));
    p.buffers_used = static_cast<std::uint64_t>(s.int64(10));
    p.records_written = static_cast<std::uint64_t>(s.int64(11));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ProcessRank> Reader::process_ranks() const {
  std::vector<ProcessRank> out;
  if (!has_table("process_rank")) return out;
  auto s = prepare(
      "SELECT pid, rank, local_rank, world_size, local_world_size, launcher, host_name"
      " FROM process_rank ORDER BY rank, pid");
  auto in_range = [&](std::int64_t v) {
    if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) {
      throw Error(path() + " is damaged: process_rank holds " + std::to_string(v) +
                  ", not a rank, local rank or size in [0, 2^31)");
    }
    return static_cast<std::int32_t>(v);
  };
  auto optional = [&](int column) {
    return s.is_null(column) ? std::optional<std::int32_t>() : in_range(s.int64(column));
  };
  while (s.step()) {
    if (s.is_null(0) || s.is_null(1)) throw Error(path() + " is damaged: process_rank holds NULL");
    ProcessRank r;
    r.pid = static_cast<std::uint32_t>(in_range(s.int64(0)));
    r.rank = in_range(s.int64(1));
    r.local_rank = optional(2);
    r.world_size = optional(3);
    r.local_world_size = optional(4);
    r.launcher = s.text(5);
    r.host_name = s.text(6);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<DeviceInfo> Reader::devices() const {
  auto s = prepare(
      "SELECT id, uuid, name, compute_capability_major, compute_capability_minor, sm_count,"
      " core_clock_khz, memory_clock_khz, memory_bus_width_bits, global_memory_bytes,"
      " l2_cache_bytes, max_threads_per_sm, shared_memory_per_sm_bytes, registers_per_sm"
      " FROM device ORDER BY id");
  std::vector<DeviceInfo> out;
  while (s.step()) {
    DeviceInfo d;
    d.id = static_cast<std::uint32_t>(s.int64(0));
    d.uuid = s.text(1);
    d.name = s.text(2);
    d.cc_major = static_cast<int>(s.int64(3));
    d.cc_minor = static_cast<int>(s.int64(4));
    d.sm_count = static_cast<int>(s.int64(5));
    d.core_clock_khz = static_cast<int>(s.int64(6));
    d.memory_clock_khz = static_cast<int>(s.int64(7));
    d.memory_bus_width_bits = static_cast<int>(s.int64(8));
    d.global_memory_bytes = static_cast<std::uint64_t>(s.int64(9));
    d.l2_cache_bytes = static_cast<int>(s.int64(10));
    d.max_threads_per_sm = static_cast<int>(s.int64(11));
    d.shared_memory_per_sm_bytes = static_cast<int>(s.int64(12));
    d.registers_per_sm = static_cast<int>(s.int64(13));
    out.push_back(std::move(d));
  }
  return out;
}

std::string Reader::source(std::string_view table) const {
  if (lean_ && (table == "kernel" || table == "api_call"))
    return "temp.fl_lean_" + std::string(table);
  return "main." + std::string(table);
}

std::int64_t Reader::gpu_record_count() const {
  return query_int(
      "SELECT (SELECT COUNT(*) FROM kernel) + (SELECT COUNT(*) FROM memcpy) +"
      " (SELECT COUNT(*) FROM memset) + (SELECT COUNT(*) FROM memory_event)");
}

std::int64_t Reader::gpu_record_bound() const {
  std::int64_t sum = 0;
  for (const char* table : {lean_ ? "kernel_lean" : "kernel", "memcpy", "memset", "memory_event"}) {
    if (!has_table(table)) continue;  // version 1 lacks memory_event
    const std::int64_t largest =
        query_int(std::string("SELECT COALESCE(MAX(rowid), 0) FROM main.") + table);
    // A hostile row id (negative, or near 2^63) must not wrap the sum: saturate instead.
    if (largest > 0 && __builtin_add_overflow(sum, largest, &sum))
      return std::numeric_limits<std::int64_t>::max();
  }
  return sum;
}

}  // namespace fuselens::db
