#pragma once
// Reader: opens a FuseLens capture read-only and validates it before anything else reads it.
//
// Refused with one clear db::Error message: a missing file, a file that is not an SQLite
// database, an SQLite database of another program (wrong PRAGMA application_id or missing
// tables), a capture written with a newer schema than kSchemaVersion, and a capture with an
// implausible timestamp (check_timestamps) or size (check_sizes). The file is read with
// SQLITE_OPEN_READONLY, extensions off, defensive mode on; a capture in WAL mode without -wal
// and -shm files is opened immutable, so that reading it creates neither. The file is modified in
// one case only: a hot rollback journal beside it (a writer killed mid-transaction) is rolled
// back, as any SQLite client does on open, when the file and its folder are writable; when they
// are not, the journal is ignored. Both say so through the notice handler.

#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/db/Records.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

/// The bound on a capture's timestamps: every time is under 2^62 ns (the year 2116 on CUPTI's
/// clock, which counts from the Unix epoch). With every time in [0, 2^62), a difference of two
/// times and the sum of two times fit in int64; sums of many durations still need care.
inline constexpr std::int64_t kMaxTimestampNs = std::int64_t{1} << 62;

/// Plausibility check of every timed table (kernel, memcpy, memset, api_call, sync_event,
/// overhead, nvtx_range: 0 <= start_ns <= end_ns < kMaxTimestampNs, end_ns NULL allowed for an
/// unterminated NVTX range; memory_event and nvtx_mark: 0 <= timestamp_ns < kMaxTimestampNs).
/// Throws db::Error naming the table, the row and its times at the first row that fails; tables
/// absent in older schema versions are skipped. Cost: one scan per table, which SQLite serves
/// from a covering index where the capture has one (about 0.5 s per ten million rows on the
/// 2-core development machine: docs/BENCHMARKS.md, "Ten million kernels"). Reader's constructor
/// runs it.
void check_timestamps(const Connection& connection, const std::string& path);

/// True when `name` is one of the views the schema creates (db/schema.sql, "Views": kernel_v,
/// api_call_v, ...; read from schema_sql()). The Reader accepts these views in a capture, and no
/// other view; no analysis reads them.
bool is_schema_view(std::string_view name);

/// Largest plausible size of one copy, set or allocation (memcpy.bytes, memset.bytes,
/// memory_event.bytes), bytes: 2^50 = 1 PiB, far above any device or host memory. Reader's
/// constructor refuses a capture holding a size that is not an integer in [0, kMaxSizeBytes)
/// (issue 22: INT64_MAX and negative allocation sizes overflowed the memory summary); sums of
/// many sizes still need care (they saturate in the analyses).
inline constexpr std::int64_t kMaxSizeBytes = std::int64_t{1} << 50;

/// The size check above: throws db::Error naming the table, the row and its size at the first
/// row that fails; tables absent in older schema versions are skipped. One scan per table.
void check_sizes(const Connection& connection, const std::string& path);

/// Longest string a capture may hold (strings.value), bytes: 1 MiB. Reader's constructor refuses
/// a capture with a longer one (naming its id and length): the cursors join the string table per
/// row, so a 90 MB kernel name was read again for every kernel launched under it (issue 22).
/// Strings up to this bound are shown cut to kMaxTextBytes (Printable.h).
inline constexpr std::int64_t kMaxStringBytes = std::int64_t{1} << 20;

/// Receives one line for each thing the path constructor of Reader did beyond reading the file
/// (a hot journal rolled back or ignored). The default writes "note: LINE" to standard error.
using NoticeHandler = void (*)(const std::string& line);
/// Sets the handler for the whole process (nullptr: the default); not thread-safe.
void set_notice_handler(NoticeHandler handler);

/// The tables whose timestamp check Reader can defer (TimestampCheck::DeferLargeTables): the two
/// that grow with every launch, one row per kernel and per launch call.
inline constexpr std::string_view kDeferredTables[] = {"kernel", "api_call"};

/// When Reader's constructor runs the timestamp check.
enum class TimestampCheck {
  All,  ///< every timed table (the default)
  /// every timed table but kDeferredTables; a caller that reads the rows of one of those calls
  /// Reader::check_table_timestamps first. For an analysis that can answer from the derived
  /// tables (the summary's stored aggregates) without reading ten million kernel rows.
  DeferLargeTables,
};

/// A span of time [start_ns, end_ns) on CUPTI's clock.
struct TimeSpan {
  std::int64_t start_ns = 0, end_ns = 0;
};

/// The run row plus how it ended.
struct RunSummary {
  RunInfo info;
  RunEnd end;
  std::uint64_t dropped_records = 0;
  int cuda_processes = 0;
};

class Reader {
 public:
  explicit Reader(const std::string& path, TimestampCheck check = TimestampCheck::All);
  /// Validates and reads the capture open in `connection` (its path names it in messages), as
  /// the path constructor does. A ReadWrite connection lets its owner also write through
  /// connection(): prof-run finalizes, stores the summary's aggregates and reads its report over
  /// one connection. The file is changed only through connection().
  explicit Reader(Connection connection, TimestampCheck check = TimestampCheck::All);

  const std::string& path() const { return connection_.path(); }
  int schema_version() const { return schema_version_; }
  /// Prepares `sql`. On a reader whose kernel or api_call timestamp check was deferred
  /// (TimestampCheck::DeferLargeTables), a statement that reads one of those tables' time columns
  /// (start_ns, end_ns; in a lean capture the lean tables' start, duration and base) runs that
  /// check first (check_table_timestamps): an SQLite authorizer notes what each statement reads,
  /// so no analysis gets a row whose times were not checked, whether or not it asked. Throws
  /// db::Error as the check does.
  Statement prepare(std::string_view sql) const;
  /// The connection it reads through; for writing only when it was given a ReadWrite one.
  Connection& connection() { return connection_; }
  /// Prepares `sql` without prepare()'s deferred check, for a statement whose caller checks every
  /// time it reads itself (the extent's two values: time_extent, TraceCursors.h).
  Statement prepare_unwatched(std::string_view sql) const;
  /// Value of a single-integer query, with prepare()'s deferred check.
  std::int64_t query_int(std::string_view sql) const;

  /// True when the capture has table `name` (version-1 captures lack the version-2 tables); in a
  /// lean capture (Layout.h) true for kernel and api_call, which it reads through TEMP views.
  bool has_table(std::string_view name) const;
  /// True when the capture is in the lean layout (schema version 10, `prof-run --layout lean`).
  bool lean() const { return lean_; }
  /// For prof-run's finalization (tools/prof-run/FinalizeCapture.cpp): the cursors that read a
  /// lean capture's kernels or API calls in (pid, correlation id) or start order
  /// (ActivityCursors.h says which) read them in id order instead, which is the order they were
  /// written in, and check it (Cursor's KeyOf): a lean capture has no index to give that order, and
  /// SQLite's sort of ten million rows costs about ten seconds. A capture whose rows were written
  /// out of that order (several threads, streams or processes) makes such a cursor throw
  /// OrderBroken, and the caller computes again on a reader without it. Off by default; a
  /// full-layout capture is read as before.
  void read_lean_by_id(bool on) { lean_by_id_ = on; }
  /// True when read_lean_by_id(true) was called on a lean capture's reader.
  bool lean_by_id() const { return lean_ && lean_by_id_; }
  /// What a query names to read `table` of the file itself, not a window's view of it (Window.cpp):
  /// "main.TABLE", or for a lean capture's kernel and api_call the reader's views of the lean
  /// tables.
  std::string source(std::string_view table) const;

  RunSummary run() const;
  std::vector<ProcessInfo> processes() const;
  std::vector<DeviceInfo> devices() const;
  /// The process_rank rows by rank, then pid (empty before schema 8 or without a launcher).
  /// Throws db::Error on a rank outside [0, 2^31) or a NULL where the schema forbids one.
  std::vector<ProcessRank> process_ranks() const;

  /// Runs the timestamp check of `table` that the constructor deferred (TimestampCheck::
  /// DeferLargeTables), once; does nothing for any other table or when nothing was deferred.
  /// Throws db::Error as the constructor does; once it has failed, every later call (and every
  /// prepare() that reads a deferred table's times) throws the same error again.
  void check_table_timestamps(std::string_view table) const;
  /// A second reader of the same file, for another thread (a connection serves one thread at a
  /// time): opened read-only by path with TimestampCheck::DeferLargeTables, every timestamp check
  /// this reader ran counted as run (a failed one fails there too), reading a lean capture by id
  /// when this one does (read_lean_by_id). Only for an unrestricted
  /// reader (a window's views belong to its connection). Reads what is committed: a write this
  /// reader's connection has not committed is not seen. Throws db::Error on a restricted reader
  /// and as the path constructor does.
  Reader twin() const;
  /// Counts the deferred timestamp checks `twin` (from twin()) ran, or failed, as this reader's
  /// own, so that a later read here does not check the table again.
  void take_checks(const Reader& twin) const;
  /// The message of a deferred timestamp check that failed, or empty: for a caller that let an
  /// analysis catch the error (a report section with a note) and must still refuse the capture.
  const std::string& deferred_check_failure() const { return deferred_failure_; }
  /// Number of GPU activity records (kernels, copies, memsets, memory events).
  std::int64_t gpu_record_count() const;
  /// The largest row ids of the same four tables of the file, summed (a lean capture's
  /// kernel_lean for kernel): their row count in a capture as prof-run writes it (rows are only
  /// appended), an upper bound of it otherwise, in four b-tree descents where gpu_record_count
  /// scans an index of each table (about 0.1 s of CPU a ten million rows). What the default
  /// window's rule reads (analyzer/window/Window.h). Throws db::Error when a query fails.
  std::int64_t gpu_record_bound() const;

  /// Restricts every later read through this reader to a window (docs/windows.md): `spans` are
  /// sorted, disjoint CPU-time spans. Kernels, copies and memsets are kept when their launch
  /// call (the earliest API call of the same pid and correlation id) started inside a span, or
  /// their own start when they have no launch call (projected by launch, as Nsight Systems
  /// projects NVTX ranges); API calls, NVTX ranges and marks, memory events, synchronization
  /// and overhead records when they start inside a span. Works through TEMP views that shadow
  /// the capture's tables (the file is not changed); the stored summary aggregates are hidden
  /// (has_summary_tables is false) since they describe the whole capture. Call at most once,
  /// before any analysis reads; throws db::Error on a second call or unsorted spans.
  void restrict_to(const std::vector<TimeSpan>& spans);
  /// True after restrict_to.
  bool restricted() const { return restricted_; }

 private:
  Connection connection_;
  int schema_version_ = 0;
  bool deferred_ = false;
  bool restricted_ = false;
  bool lean_ = false;
  bool lean_by_id_ = false;
  mutable bool deferred_checked_[std::size(kDeferredTables)] = {};
  mutable std::string deferred_failure_;
  /// What the authorizer saw statements read (by kDeferredTables index) since the last check;
  /// on the heap: SQLite holds its address.
  struct ReadWatch {
    bool reads[std::size(kDeferredTables)] = {};
    bool checking = false;  // the check's own statements
  };
  std::unique_ptr<ReadWatch> watch_;
  void run_watched_checks() const;
};

}  // namespace fuselens::db
