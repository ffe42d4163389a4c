// Reader::restrict_to: a window over a capture as TEMP views that shadow its tables (SQLite
// resolves an unqualified table name in temp before main), so every query of db/ reads only the
// window's rows without a copy of the capture and without a change to the file.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::db {
namespace {

// "x.time_ns lies in a span of temp.fl_window": the span starting last at or before the time
// ends after it (spans are disjoint; the primary key serves the lookup).
std::string inside(const std::string& time) {
  return "(SELECT w.end_ns FROM temp.fl_window AS w WHERE w.start_ns <= " + time +
         " ORDER BY w.start_ns DESC LIMIT 1) > " + time;
}

/// The ids of the rows of GPU table `table` (read as `rows`) whose launch lies in one of `spans`
/// (sorted, disjoint, none empty): the earliest start among the calls of `calls` with the row's
/// pid and correlation id, else the row's own start. The same rows as the SQL of restrict_to
/// (`id IN (... COALESCE(MIN(a.start_ns), g.start_ns) ...)`), found by merging the rows and the
/// calls read once each in (pid, correlation id) order, which the correlation indexes of a
/// full-layout capture give without a sort: ten million kernels in about 4 s instead of 18.6 s of
/// one index probe per row. Sorted by id. nullopt when a key or time is neither NULL nor an
/// INTEGER (a hostile capture): the caller then runs the SQL, which compares mixed types as
/// SQLite does. `outside` gets the ids of the other rows read (every row is one or the other).
std::optional<std::vector<std::int64_t>> ids_launched_inside(const Connection& connection,
                                                             const std::string& rows,
                                                             const std::string& calls,
                                                             const std::vector<TimeSpan>& spans,
                                                             std::vector<std::int64_t>& outside) {
  std::vector<std::int64_t> ids;
  outside.clear();
  auto g = connection.prepare("SELECT id, pid, correlation_id, start_ns FROM " + rows +
                              " ORDER BY pid, correlation_id");
  auto c = connection.prepare("SELECT pid, correlation_id, start_ns FROM " + calls +
                              " ORDER BY pid, correlation_id");
  // Columns [0, n) of the current row, each read once (a column's type costs as much as its
  // value); false when one is neither NULL nor an INTEGER.
  using Value = std::optional<std::int64_t>;
  const auto read = [](const Statement& s, int n, Value* out) {
    for (int i = 0; i < n; ++i) {
      if (s.type_is_integer(i)) {
        out[i] = s.int64(i);
      } else if (s.is_null(i)) {
        out[i].reset();
      } else {
        return false;
      }
    }
    return true;
  };
  Value gv[4], cv[3];  // g: id, pid, correlation id, start; c: pid, correlation id, start
  // Steps to the next call row and reads it; false once none is left or one is unreadable (`bad`).
  bool bad = false;
  const auto next_call = [&] {
    if (!c.step()) return false;
    if (!read(c, 3, cv)) bad = true;
    return !bad;
  };
  bool call_row = next_call();
  if (bad) return std::nullopt;
  std::optional<std::pair<std::int64_t, std::int64_t>> call_key;  // the key of call_start
  std::optional<std::int64_t> call_start;  // MIN(start_ns) of the calls of call_key
  while (g.step()) {
    if (!read(g, 4, gv) || !gv[0]) return std::nullopt;
    std::optional<std::int64_t> at;
    if (gv[1] && gv[2]) {
      const std::pair key(*gv[1], *gv[2]);
      if (call_key != key) {
        // Calls before the key (NULL keys sort first and match nothing), then those of the key.
        for (; call_row; call_row = next_call()) {
          if (cv[0] && cv[1] && std::pair(*cv[0], *cv[1]) >= key) break;
        }
        if (bad) return std::nullopt;
        call_key = key;
        call_start.reset();
        for (; call_row && cv[0] && cv[1] && std::pair(*cv[0], *cv[1]) == key;
             call_row = next_call()) {
          if (cv[2]) call_start = call_start ? std::min(*call_start, *cv[2]) : *cv[2];
        }
        if (bad) return std::nullopt;
      }
      at = call_start;
    }
    if (!at) at = gv[3];
    bool in = false;  // no time: inside no span
    if (at) {
      const auto after =
          std::upper_bound(spans.begin(), spans.end(), *at,
                           [](std::int64_t t, const TimeSpan& span) { return t < span.start_ns; });
      in = after != spans.begin() && std::prev(after)->end_ns > *at;
    }
    (in ? ids : outside).push_back(*gv[0]);
  }
  std::sort(ids.begin(), ids.end());
  std::sort(outside.begin(), outside.end());
  return ids;
}

/// What the index-driven search below found: the rows of a narrow window.
struct IndexedWindow {
  std::vector<std::int64_t> calls;                       // api_call ids starting inside, sorted
  std::map<std::string, std::vector<std::int64_t>> gpu;  // GPU table -> ids launched inside, sorted
};

/// Gives up the index-driven search: the window is too wide for it to pay, or a value is neither
/// NULL nor an INTEGER (the merge or the SQL then decides as before).
struct GiveUp {};

/// The index-driven form of restrict_to's row selection for a full-layout capture, for windows
/// that hold a small part of it: the calls starting inside each span are read by ranges of
/// api_by_thread (pid, tid, start_ns), one per thread and span; each of their (pid, correlation
/// id) keys whose earliest call starts inside gives its GPU rows through the correlation indexes;
/// GPU rows without a timed launch call are found by their own start (kernel_by_start's (device,
/// stream, start_ns) ranges; copies and memsets by one scan of their table). The same rows as the
/// merge and the SQL (ids_launched_inside), in time proportional to the window's rows, where the
/// merge reads every kernel and call of the capture (about 25 s for one second of ten million
/// kernels, docs/BENCHMARKS.md). Throws GiveUp past `budget` rows read or on a non-integer value.
class IndexedSearch {
 public:
  IndexedSearch(const Connection& c, const std::vector<TimeSpan>& spans, std::int64_t budget)
      : c_(c), spans_(spans), budget_(budget) {}

  IndexedWindow run(const std::vector<std::string>& gpu_tables) {
    IndexedWindow w;
    std::set<std::pair<std::int64_t, std::int64_t>> keys;  // of calls starting inside
    std::vector<std::pair<Value, Value>> threads;
    for (const auto& pid : distinct("api_call", "pid", {}, {})) {
      for (const auto& tid : distinct("api_call", "tid", {"pid"}, {pid}))
        threads.emplace_back(pid, tid);
    }
    // A wide window gives up before reading a row: its calls counted in the index, at most the
    // budget of them (about 50 ns each).
    std::int64_t calls = 0;
    for (const auto& [pid, tid] : threads) {
      auto count = c_.prepare("SELECT COUNT(*) FROM (SELECT 1 FROM main.api_call WHERE " +
                              in_span("pid", pid, "tid", tid) + " LIMIT ?)");
      for (const auto& span : spans_) {
        bind_in_span(count, pid, tid, span);
        const std::int64_t left = budget_ - calls;  // the limit: one more than is left
        count.bind(5, left < std::numeric_limits<std::int64_t>::max() ? left + 1 : left);
        count.step();
        calls += count.int64(0);
        count.reset();
        if (calls > budget_) throw GiveUp{};
      }
    }
    for (const auto& [pid, tid] : threads) {
      auto range = c_.prepare("SELECT id, correlation_id FROM main.api_call WHERE " +
                              in_span("pid", pid, "tid", tid));
      for (const auto& span : spans_) {
        bind_in_span(range, pid, tid, span);
        while (range.step()) {
          charge();
          integer(range, 0);
          w.calls.push_back(range.int64(0));
          if (pid && !range.is_null(1)) keys.emplace(*pid, integer(range, 1));
        }
        range.reset();
      }
    }
    std::sort(w.calls.begin(), w.calls.end());
    for (const auto& table : gpu_tables) {
      std::vector<std::int64_t>& ids = w.gpu[table];
      auto rows =
          c_.prepare("SELECT id FROM main." + table + " WHERE pid = ? AND correlation_id = ?");
      for (const auto& [pid, correlation] : keys) {
        const auto launch = launch_start(pid, correlation);
        if (!launch || !inside(*launch)) continue;  // an earlier call of the key started before
        rows.bind(1, pid).bind(2, correlation);
        while (rows.step()) {
          charge();
          ids.push_back(integer(rows, 0));
        }
        rows.reset();
      }
      own_start(table, ids);
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    }
    return w;
  }

 private:
  using Value = std::optional<std::int64_t>;

  void charge() {
    if (--budget_ < 0) throw GiveUp{};
  }
  static std::int64_t integer(const Statement& s, int column) {
    if (!s.type_is_integer(column)) throw GiveUp{};
    return s.int64(column);
  }
  static std::string equal(const std::string& column, const Value& v) {
    return v ? column + " = ?" : column + " IS ?";
  }
  static void bind_equal(Statement& s, int index, const Value& v) {
    if (v) {
      s.bind(index, *v);
    } else {
      s.bind_null(index);
    }
  }
  /// "A = ?1 AND B = ?2 AND start_ns >= ?3 AND start_ns < ?4" (IS for NULL values): the rows of
  /// one (A, B) starting inside one span, a range of an index on (A, B, start_ns).
  static std::string in_span(const std::string& a, const Value& va, const std::string& b,
                             const Value& vb) {
    return equal(a, va) + " AND " + equal(b, vb) + " AND start_ns >= ? AND start_ns < ?";
  }
  static void bind_in_span(Statement& s, const Value& va, const Value& vb, const TimeSpan& span) {
    bind_equal(s, 1, va);
    bind_equal(s, 2, vb);
    s.bind(3, span.start_ns).bind(4, span.end_ns);
  }
  bool inside(std::int64_t t) const {
    const auto after =
        std::upper_bound(spans_.begin(), spans_.end(), t,
                         [](std::int64_t v, const TimeSpan& span) { return v < span.start_ns; });
    return after != spans_.begin() && std::prev(after)->end_ns > t;
  }

  /// The distinct values of `column` of `table` where the `prefix` columns equal `values` (NULL
  /// first when present), one probe each through an index that leads with prefix then column.
  std::vector<Value> distinct(const std::string& table, const std::string& column,
                              const std::vector<std::string>& prefix,
                              const std::vector<Value>& values) {
    std::string where;
    for (std::size_t i = 0; i < prefix.size(); ++i) where += equal(prefix[i], values[i]) + " AND ";
    const auto bind_prefix = [&](Statement& s) {
      for (std::size_t i = 0; i < prefix.size(); ++i)
        bind_equal(s, static_cast<int>(i + 1), values[i]);
    };
    std::vector<Value> out;
    auto null =
        c_.prepare("SELECT 1 FROM main." + table + " WHERE " + where + column + " IS NULL LIMIT 1");
    bind_prefix(null);
    if (null.step()) out.emplace_back();
    const auto n = static_cast<int>(prefix.size());
    auto next = c_.prepare("SELECT " + column + " FROM main." + table + " WHERE " + where + column +
                           " > ?" + std::to_string(n + 1) + " ORDER BY " + column + " LIMIT 1");
    std::int64_t after = std::numeric_limits<std::int64_t>::min();
    auto first = c_.prepare("SELECT " + column + " FROM main." + table + " WHERE " + where +
                            column + " IS NOT NULL ORDER BY " + column + " LIMIT 1");
    bind_prefix(first);
    if (!first.step()) return out;
    after = integer(first, 0);
    out.emplace_back(after);
    for (;;) {
      charge();
      bind_prefix(next);
      next.bind(n + 1, after);
      const bool found = next.step();
      if (!found) break;
      after = integer(next, 0);
      next.reset();
      out.emplace_back(after);
    }
    return out;
  }

  /// The earliest start among the calls of (pid, correlation id): nullopt when none has one.
  Value launch_start(std::int64_t pid, std::int64_t correlation) {
    if (!launch_) {
      launch_.emplace(c_.prepare(
          "SELECT MIN(start_ns) FROM main.api_call WHERE pid = ? AND correlation_id = ?"));
    }
    Statement& s = *launch_;
    s.bind(1, pid).bind(2, correlation);
    s.step();
    const Value v = s.is_null(0) ? Value{} : Value{integer(s, 0)};
    s.reset();
    return v;
  }

  /// Adds the rows of GPU table `table` that start inside and have no timed launch call.
  void own_start(const std::string& table, std::vector<std::int64_t>& ids) {
    const auto add = [&](Statement& s) {
      while (s.step()) {
        charge();
        const std::int64_t id = integer(s, 0);
        if (s.is_null(2) || !inside(integer(s, 2))) continue;
        if (!s.is_null(1) && !s.is_null(3) &&
            launch_start(integer(s, 1), integer(s, 3)).has_value())
          continue;  // placed by its launch call above
        ids.push_back(id);
      }
    };
    if (table != "kernel") {  // no index on their starts: one scan of the table
      auto all = c_.prepare("SELECT id, pid, start_ns, correlation_id FROM main." + table);
      add(all);
      return;
    }
    for (const auto& device : distinct("kernel", "device_id", {}, {})) {
      for (const auto& stream : distinct("kernel", "stream_id", {"device_id"}, {device})) {
        auto range = c_.prepare("SELECT id, pid, start_ns, correlation_id FROM main.kernel WHERE " +
                                in_span("device_id", device, "stream_id", stream));
        for (const auto& span : spans_) {
          bind_in_span(range, device, stream, span);
          add(range);
          range.reset();
        }
      }
    }
  }

  const Connection& c_;
  const std::vector<TimeSpan>& spans_;
  std::int64_t budget_;
  std::optional<Statement> launch_;
};

/// A GPU table with fewer rows than the launch calls / kFewRowsRatio finds its window's rows by an
/// index probe per row rather than by the merge, which reads every call (restrict_to).
constexpr std::int64_t kFewRowsRatio = 16;

/// The rows of a narrow window found through the indexes (IndexedSearch), or nullopt when the
/// window is wide (more rows than an eighth of the capture's calls and kernels, at least 65,536)
/// or a value read is not an integer.
std::optional<IndexedWindow> indexed_window(const Connection& c, const std::vector<TimeSpan>& spans,
                                            const std::vector<std::string>& gpu_tables) {
  auto size = c.prepare(
      "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM main.api_call) + "
      "(SELECT COALESCE(MAX(rowid), 0) FROM main.kernel)");
  size.step();
  const std::int64_t rows = size.type_is_integer(0) ? size.int64(0) : 0;
  try {
    return IndexedSearch(c, spans, std::max<std::int64_t>(65536, rows / 8)).run(gpu_tables);
  } catch (const GiveUp&) {
    return std::nullopt;
  }
}

}  // namespace

void Reader::restrict_to(const std::vector<TimeSpan>& spans) {
  if (restricted_) throw Error("'" + path() + "': a window is already applied");
  // The times this function reads to select the window's rows are checked at its end, through
  // the window's views: the rows the analyses will read, not the whole tables (a full check of
  // ten million kernels and calls costs about 4.5 s). The selection itself only compares them;
  // its statements are prepared on the connection (no check runs), and what they read is not
  // noted (the watch is put back as it was).
  const std::optional<ReadWatch> watched =
      watch_ ? std::optional<ReadWatch>(*watch_) : std::nullopt;
  bool present[3] = {};  // kernel, memcpy, memset: before any statement of the selection
  const char* gpu_tables[] = {"kernel", "memcpy", "memset"};
  for (int i = 0; i < 3; ++i) present[i] = has_table(gpu_tables[i]);
  const bool calls_present = has_table("api_call");
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].end_ns < spans[i].start_ns || (i > 0 && spans[i].start_ns < spans[i - 1].end_ns))
      throw Error("window spans must be sorted and disjoint");
  }
  connection_.exec(
      "CREATE TEMP TABLE fl_window (start_ns INTEGER PRIMARY KEY, end_ns INTEGER NOT NULL)");
  {
    auto insert =
        connection_.prepare("INSERT INTO temp.fl_window (start_ns, end_ns) VALUES (?, ?)");
    for (const auto& span : spans) {
      if (span.end_ns == span.start_ns) continue;
      insert.bind(1, span.start_ns).bind(2, span.end_ns);
      insert.run();
    }
  }
  // A lean capture has no index on its calls' correlation ids (Layout.h): the launch of each
  // correlation id is found once into a keyed TEMP table, instead of a scan of every call per
  // GPU row.
  std::string calls = source("api_call");
  if (lean_) {
    connection_.exec(
        "CREATE TEMP TABLE fl_launch (pid INTEGER, correlation_id INTEGER, start_ns INTEGER, "
        "PRIMARY KEY (pid, correlation_id)) WITHOUT ROWID");
    connection_.exec(
        "INSERT INTO temp.fl_launch SELECT pid, correlation_id, MIN(start_ns) FROM " + calls +
        " WHERE pid IS NOT NULL AND correlation_id IS NOT NULL GROUP BY pid, correlation_id");
    calls = "temp.fl_launch";
  }
  // GPU work: the ids of the rows whose launch started inside the window, found once: merged in
  // correlation order (ids_launched_inside; a lean capture's GPU rows sorted by SQLite, having no
  // correlation index, its calls read from fl_launch's key), or by SQL for a table with few rows
  // and for values that are not integers.
  std::vector<TimeSpan> nonempty;
  for (const auto& span : spans) {
    if (span.end_ns != span.start_ns) nonempty.push_back(span);
  }
  // A narrow window of a full-layout capture: its rows through the indexes, without reading the
  // rest (IndexedSearch); a wide one (or a lean capture) as below.
  std::optional<IndexedWindow> indexed;
  if (!lean_ && calls_present) {
    std::vector<std::string> gpu;
    for (int i = 0; i < 3; ++i) {
      if (present[i]) gpu.emplace_back(gpu_tables[i]);
    }
    indexed = indexed_window(connection_, nonempty, gpu);
  }
  // Into TEMP table `table` (id INTEGER PRIMARY KEY), created here: `ids`, sorted, 256 a statement.
  const auto store_ids = [&](const std::string& table, const std::vector<std::int64_t>& ids) {
    constexpr std::size_t kBatch = 256;
    connection_.exec("CREATE TEMP TABLE " + table + " (id INTEGER PRIMARY KEY)");
    connection_.exec("SAVEPOINT fl_window_ids");
    std::string values = "(?)";
    for (std::size_t i = 1; i < kBatch; ++i) values += ",(?)";
    auto batch = connection_.prepare("INSERT INTO temp." + table + " (id) VALUES " + values);
    auto one = connection_.prepare("INSERT INTO temp." + table + " (id) VALUES (?)");
    std::size_t i = 0;
    for (; i + kBatch <= ids.size(); i += kBatch) {
      for (std::size_t j = 0; j < kBatch; ++j) batch.bind(static_cast<int>(j + 1), ids[i + j]);
      batch.run();
    }
    for (; i < ids.size(); ++i) {
      one.bind(1, ids[i]);
      one.run();
    }
    connection_.exec("RELEASE fl_window_ids");
  };
  // The merge reads every launch call once per GPU table: a table with few rows against the calls
  // (the copies and memsets of a kernel-heavy run) finds its launches by one index probe a row
  // instead (the SQL below), which costs what the table holds.
  const auto few_rows = [&](const std::string& t) {
    const auto table = [&](const std::string& name) {  // the one that holds the rows
      return lean_ && (name == "kernel" || name == "api_call") ? name + "_lean" : name;
    };
    auto size = connection_.prepare("SELECT (SELECT COALESCE(MAX(rowid), 0) FROM main." +
                                    table(t) + "), (SELECT COALESCE(MAX(rowid), 0) FROM main." +
                                    table("api_call") + ")");
    size.step();
    return size.type_is_integer(0) && size.type_is_integer(1) &&
           size.int64(0) * kFewRowsRatio < size.int64(1);
  };
  for (int i = 0; i < 3; ++i) {
    if (!present[i]) continue;
    const std::string t = gpu_tables[i];
    std::vector<std::int64_t> outside;
    const auto ids =
        indexed       ? std::optional(indexed->gpu[t])
        : few_rows(t) ? std::nullopt
                      : ids_launched_inside(connection_, source(t), calls, nonempty, outside);
    // A lean capture's kernel is already a TEMP view (Reader.cpp): replaced by the window's.
    if (ids && !indexed && outside.size() < ids->size()) {
      // A wide window (the steady steps of a run): its view names the rows it leaves out. SQLite
      // then reads the table in whatever index order a statement asks for and tests each row
      // against that small set, where an IN list of most of the table is read in id order and
      // sorted again (one million kernels in correlation order: 0.59 against 1.13 s in the
      // sqlite3 shell), and the list is not written (0.5 s a million ids).
      store_ids("fl_" + t + "_out", outside);
      connection_.exec("DROP VIEW IF EXISTS temp." + t);
      connection_.exec("CREATE TEMP VIEW " + t + " AS SELECT * FROM " + source(t) +
                       " WHERE id NOT IN temp.fl_" + t + "_out");
      continue;
    }
    if (ids) {
      store_ids("fl_" + t + "_ids", *ids);
    } else {
      connection_.exec("CREATE TEMP TABLE fl_" + t + "_ids (id INTEGER PRIMARY KEY)");
      const std::string launch = "COALESCE((SELECT MIN(a.start_ns) FROM " + calls +
                                 " AS a WHERE a.pid = g.pid AND "
                                 "a.correlation_id = g.correlation_id), g.start_ns)";
      connection_.exec("INSERT INTO temp.fl_" + t + "_ids SELECT id FROM (SELECT g.id AS id, " +
                       launch + " AS at FROM " + source(t) + " AS g) WHERE " + inside("at"));
    }
    connection_.exec("DROP VIEW IF EXISTS temp." + t);
    connection_.exec("CREATE TEMP VIEW " + t + " AS SELECT * FROM " + source(t) +
                     " WHERE id IN temp.fl_" + t + "_ids");
  }
  if (watch_) *watch_ = *watched;  // the selection's reads are not noted (see above)
  // Activities placed by their own start (or timestamp).
  const std::pair<const char*, const char*> timed[] = {
      {"api_call", "start_ns"},         {"nvtx_range", "start_ns"}, {"nvtx_mark", "timestamp_ns"},
      {"memory_event", "timestamp_ns"}, {"sync_event", "start_ns"}, {"overhead", "start_ns"}};
  for (const auto& [table, column] : timed) {
    if (!has_table(table)) continue;
    const std::string t = table;
    connection_.exec("DROP VIEW IF EXISTS temp." + t);
    if (indexed && t == "api_call") {  // the calls the search found (the same rows)
      store_ids("fl_api_call_ids", indexed->calls);
      connection_.exec("CREATE TEMP VIEW api_call AS SELECT * FROM " + source(t) +
                       " WHERE id IN temp.fl_api_call_ids");
      continue;
    }
    connection_.exec("CREATE TEMP VIEW " + t + " AS SELECT * FROM " + source(t) + " AS x WHERE " +
                     inside(std::string("x.") + column));
  }
  restricted_ = true;
  // The window's views of the deferred tables are read from now on (the reader's own views, whose
  // reads the watch does not note): their rows are checked now.
  if (watch_) {
    for (auto& read : watch_->reads) read = true;
  }
  run_watched_checks();
}

}  // namespace fuselens::db
