#pragma once
// Cursor: a typed, forward-only walk over the rows of one query of a capture. The queries live
// in db (Strings.h, ActivityCursors.h, TraceCursors.h, SummaryStore.h); the analyses read plain
// row structs and never see SQL.
//
// Usage: `auto c = db::kernel_launches(reader); while (auto row = c.next()) { ... row->pid ... }`.
// Rows come in the order the named query states (ORDER BY where it says so; otherwise the order
// SQLite scans, which the analyses have always relied on and which stays that of the query).
// Integer columns are read as SQLite int64 values, exactly as the analyses read them before;
// callers narrow them. Every time a row carries (start_ns, end_ns, timestamp_ns, first_ns,
// last_ns, duration_ns) is checked as it is read: Reader's check at open scans the tables, but a
// query SQLite serves from an index reads the index's copy of the columns, which a damaged file
// can hold differently (found by the fuzzer: a flipped bit in an index gave an API call an end
// time of -7.4e18 ns and overflowed the launch-latency arithmetic). Errors: db::Error from
// SQLite (a corrupt capture) and for a time outside [0, kMaxTimestampNs).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

namespace detail {

/// Throws db::Error naming the capture, the field and its value: a row read through `s` holds a
/// time outside [0, kMaxTimestampNs).
[[noreturn]] void throw_implausible_time(const Statement& s, const char* field, std::int64_t value);

/// Checks one time field: plain int64 or optional (nullopt passes). `never_ended_ok`: the value
/// INT64_MAX, which cursors use for a range that never ended, passes.
template <typename T>
void check_time(const Statement& s, const char* field, const T& value, bool never_ended_ok) {
  if constexpr (requires { value.has_value(); }) {
    if (value) check_time(s, field, *value, never_ended_ok);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (value >= 0 && value < kMaxTimestampNs) return;
    if (never_ended_ok && value == INT64_MAX) return;
    throw_implausible_time(s, field, value);
  }
}

/// Checks every time field `row` has (see the file comment).
template <typename Row>
void check_row_times(const Statement& s, const Row& r) {
  if constexpr (requires { r.start_ns; }) check_time(s, "start_ns", r.start_ns, false);
  if constexpr (requires { r.end_ns; }) check_time(s, "end_ns", r.end_ns, true);
  if constexpr (requires { r.timestamp_ns; }) check_time(s, "timestamp_ns", r.timestamp_ns, false);
  if constexpr (requires { r.first_ns; }) check_time(s, "first_ns", r.first_ns, false);
  if constexpr (requires { r.last_ns; }) check_time(s, "last_ns", r.last_ns, false);
  if constexpr (requires { r.duration_ns; }) check_time(s, "duration_ns", r.duration_ns, false);
}

/// The batch size of the thread's RowProgressScope (0: none is active, rows are not counted).
std::uint32_t row_progress_batch();
/// Adds `rows` read by a Cursor of this thread to the active RowProgressScope and calls its hook.
void report_rows_read(std::uint32_t rows);
/// Calls the active scope's hook with its unchanged count (a long statement is still running);
/// swallows what the hook throws, since SQLite's progress callback calls it.
void report_still_working() noexcept;

}  // namespace detail

/// Rows a Cursor reads between two calls of a RowProgressScope's hook (2^16): the cost is one
/// counter increment per row and one function call per batch (docs/terminal.md, "Progress").
inline constexpr std::uint32_t kRowProgressBatch = std::uint32_t{1} << 16;

/// Progress of long reads (issue 23, "Terminal manners"): while a scope is alive, every Cursor
/// created on the same thread counts the rows it reads and calls `hook(total)` with the rows read
/// by all of them since the scope began, after every `batch` rows of one cursor and when a cursor
/// reaches its end. The hook runs on the reading thread, between two rows; it must not read the
/// capture and must not throw. Rows and their order are unchanged: the count is all it sees.
/// Scopes nest (the inner one replaces the outer one until it ends); not shared across threads.
/// A Reader opened while a scope is active also calls the hook, with the count unchanged, about
/// every 2^20 SQLite virtual-machine instructions of its statements (sqlite3_progress_handler;
/// a few milliseconds): the timestamp check at open, a window's resolution and index scans read
/// no Cursor rows for seconds on a large capture.
class RowProgressScope {
 public:
  using Hook = std::function<void(std::uint64_t rows)>;
  /// `batch` 0 is taken as 1.
  explicit RowProgressScope(Hook hook, std::uint32_t batch = kRowProgressBatch);
  ~RowProgressScope();
  RowProgressScope(const RowProgressScope&) = delete;
  RowProgressScope& operator=(const RowProgressScope&) = delete;

  /// Rows counted so far.
  std::uint64_t rows() const { return rows_; }

 private:
  friend std::uint32_t detail::row_progress_batch();
  friend void detail::report_rows_read(std::uint32_t rows);
  friend void detail::report_still_working() noexcept;
  Hook hook_;
  std::uint32_t batch_;
  std::uint64_t rows_ = 0;
  RowProgressScope* outer_;
};

/// Thrown by a Cursor reading in insertion order for an order it was asked to check
/// (Reader::read_lean_by_id) when a row comes before the one read last in that order: the
/// caller reads again with SQLite sorting the rows.
class OrderBroken : public Error {
 public:
  using Error::Error;
};

/// The key a Cursor reading in insertion order checks its rows against (compared as a tuple):
/// up to three columns of the order its query states, unused ones 0.
using OrderKey = std::array<std::int64_t, 3>;

template <typename Row>
class Cursor {
 public:
  /// Fills `row` from the current row of the statement.
  using ReadRow = void (*)(const Statement& s, Row& row);
  /// The order key of a row (OrderKey).
  using KeyOf = OrderKey (*)(const Row& row);

  Cursor(Statement statement, ReadRow read)
      : statement_(std::move(statement)), read_(read), batch_(detail::row_progress_batch()) {}
  /// A cursor whose statement reads in an order that is expected, not known, to be the order of
  /// `key`: every row's key is compared with the last one's, and next() throws OrderBroken when
  /// it is smaller (equal keys keep the statement's order).
  Cursor(Statement statement, ReadRow read, KeyOf key)
      : statement_(std::move(statement)),
        read_(read),
        key_of_(key),
        batch_(detail::row_progress_batch()) {}
  /// A cursor whose rows come from `pull` (nullopt once done): a merge of other cursors
  /// (detail::merged_by_id), which checked and counted their rows as they read them.
  explicit Cursor(std::function<std::optional<Row>()> pull) : pull_(std::move(pull)), batch_(0) {}

  /// The next row, or nullopt once every row was read (and on every call after that).
  std::optional<Row> next() {
    if (pull_) {
      if (done_) return std::nullopt;
      std::optional<Row> row = pull_();
      done_ = !row;
      return row;
    }
    if (done_ || !statement_->step()) {
      if (!done_ && unreported_ != 0) detail::report_rows_read(unreported_);
      done_ = true;
      unreported_ = 0;
      return std::nullopt;
    }
    Row row;
    read_(*statement_, row);
    detail::check_row_times(*statement_, row);
    if (key_of_ != nullptr) {
      const OrderKey key = key_of_(row);
      if (key < last_key_) {
        throw OrderBroken("a row out of the expected order in '" + statement_->database_path() +
                          "'");
      }
      last_key_ = key;
    }
    if (batch_ != 0 && ++unreported_ == batch_) {  // RowProgressScope
      detail::report_rows_read(unreported_);
      unreported_ = 0;
    }
    return row;
  }

  /// Calls `visit(row)` for every remaining row.
  template <typename F>
  void for_each(F&& visit) {
    while (auto row = next()) visit(*row);
  }

 private:
  std::optional<Statement> statement_;  ///< unset for a cursor that pulls
  ReadRow read_ = nullptr;
  KeyOf key_of_ = nullptr;
  std::function<std::optional<Row>()> pull_;
  OrderKey last_key_{INT64_MIN, INT64_MIN, INT64_MIN};
  bool done_ = false;
  std::uint32_t batch_;           ///< of the RowProgressScope active at construction; 0: none
  std::uint32_t unreported_ = 0;  ///< rows read since the last report
};

/// Filters pushed into the WHERE clause of an activity query as bound parameters; SQLite serves
/// them from the capture's indexes where one leads with the filtered columns (kernel_by_start:
/// device, stream, start; kernel_by_correlation and api_by_thread: pid; kernel_by_name and
/// api_by_name: the name; nvtx_by_thread, memory_by_time; db::Writer::finalize). Unset fields
/// select everything; with none set the query is the unfiltered one, with its row order. The
/// time window [t0_ns, t1_ns) selects the rows that start (instants: happen) at or after t0_ns
/// and before t1_ns.
struct ActivityFilter {
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> device_id;  ///< GPU activities and memory events only
  std::optional<std::int64_t> stream_id;  ///< kernels, copies and memsets only
  std::optional<std::int64_t> tid;        ///< API calls and NVTX only
  std::optional<std::int64_t> t0_ns;
  std::optional<std::int64_t> t1_ns;
  std::optional<std::int64_t> name_id;  ///< the name column of the query (kernels, API calls)

  bool empty() const {
    return !pid && !device_id && !stream_id && !tid && !t0_ns && !t1_ns && !name_id;
  }
};

namespace detail {

/// The columns a filter applies to in one table (empty: the table has no such column).
struct FilterColumns {
  const char* time = "start_ns";
  const char* name = "";
  bool device = true;
  bool stream = true;
  bool thread = false;
};

/// `select_from` + " WHERE ..." for the set fields of `filter` (with `extra_where`, a fixed
/// condition, first) + " " + `order_by`; `binds` receives the values in parameter order.
std::string filtered_sql(const std::string& select_from, const std::string& extra_where,
                         const ActivityFilter& filter, const FilterColumns& columns,
                         const std::string& order_by, std::vector<std::int64_t>& binds);

/// Prepares `sql` on `reader`'s connection and binds `binds` to parameters 1..n.
/// Reads columns `first`, `first` + 1, ... of the current row of `s` into the given members of
/// `row`, in order: a std::string member as text, a floating-point one as a real, any other as an
/// integer converted to its type.
template <typename Row, typename... T>
void read_columns(const Statement& s, Row& row, int first, T Row::*... members) {
  int column = first;
  auto read = [&](auto& member) {
    using M = std::remove_reference_t<decltype(member)>;
    if constexpr (std::is_same_v<M, std::string>) {
      member = s.text(column++);
    } else if constexpr (std::is_floating_point_v<M>) {
      member = static_cast<M>(s.real(column++));
    } else {
      member = static_cast<M>(s.int64(column++));
    }
  };
  (read(row.*members), ...);
}

/// The rows of `arms` (one SELECT each, without ORDER BY: a lean capture's kernels first, then
/// tables of the same columns) merged by `key`, the order `order_by` (an ORDER BY list of the
/// SELECTs, e.g. "2, 3, 4") gives: the first arm read in id order with `key` checked (Cursor's
/// KeyOf: OrderBroken when its rows were written out of that order), the others sorted by SQLite;
/// equal keys in arm order. What a UNION ALL of the arms ORDER BY `order_by` reads, without
/// sorting the first arm (Reader::read_lean_by_id).
template <typename Row, typename Reader>
Cursor<Row> merged_by_id(const Reader& reader, const std::vector<std::string>& arms,
                         const std::string& order_by, typename Cursor<Row>::ReadRow read,
                         typename Cursor<Row>::KeyOf key) {
  struct Parts {
    std::vector<Cursor<Row>> cursors;
    std::vector<std::optional<Row>> heads;
  };
  auto parts = std::make_shared<Parts>();
  for (std::size_t i = 0; i < arms.size(); ++i) {
    if (i == 0) {
      parts->cursors.emplace_back(reader.prepare(arms[i] + " ORDER BY id"), read, key);
    } else {
      parts->cursors.emplace_back(reader.prepare(arms[i] + " ORDER BY " + order_by), read);
    }
  }
  for (auto& c : parts->cursors) parts->heads.push_back(c.next());
  return Cursor<Row>([parts, key]() -> std::optional<Row> {
    std::size_t best = parts->heads.size();
    OrderKey best_key{};
    for (std::size_t i = 0; i < parts->heads.size(); ++i) {
      if (!parts->heads[i]) continue;
      const OrderKey k = key(*parts->heads[i]);
      if (best == parts->heads.size() || k < best_key) {
        best = i;
        best_key = k;
      }
    }
    if (best == parts->heads.size()) return std::nullopt;
    std::optional<Row> out = std::move(parts->heads[best]);
    parts->heads[best] = parts->cursors[best].next();
    return out;
  });
}

/// `arms` as one cursor in `order_by`'s order: their UNION ALL sorted by SQLite, or on a reader
/// that reads a lean capture by id (Reader::read_lean_by_id) merged by merged_by_id.
template <typename Row, typename Reader>
Cursor<Row> union_in_order(const Reader& reader, const std::vector<std::string>& arms,
                           const std::string& order_by, typename Cursor<Row>::ReadRow read,
                           typename Cursor<Row>::KeyOf key) {
  if (reader.lean_by_id()) return merged_by_id<Row>(reader, arms, order_by, read, key);
  std::string sql;
  for (const auto& arm : arms) sql += (sql.empty() ? "" : " UNION ALL ") + arm;
  return Cursor<Row>(reader.prepare(sql + " ORDER BY " + order_by), read);
}

template <typename Reader>
Statement prepare_bound(const Reader& reader, const std::string& sql,
                        const std::vector<std::int64_t>& binds) {
  Statement s = reader.prepare(sql);
  for (std::size_t i = 0; i < binds.size(); ++i) s.bind(static_cast<int>(i + 1), binds[i]);
  return s;
}

}  // namespace detail
}  // namespace fuselens::db
