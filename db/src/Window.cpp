// Reader::restrict_to: a window over a capture as TEMP views that shadow its tables (SQLite
// resolves an unqualified table name in temp before main), so every query of db/ reads only the
// window's rows without a copy of the capture and without a change to the file.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
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
/// SQLite does.
std::optional<std::vector<std::int64_t>> ids_launched_inside(const Connection& connection,
                                                             const std::string& rows,
                                                             const std::string& calls,
                                                             const std::vector<TimeSpan>& spans) {
  std::vector<std::int64_t> ids;
  auto g = connection.prepare("SELECT id, pid, correlation_id, start_ns FROM " + rows +
                              " ORDER BY pid, correlation_id");
  auto c = connection.prepare("SELECT pid, correlation_id, start_ns FROM " + calls +
                              " ORDER BY pid, correlation_id");
  const auto integer_or_null = [](const Statement& s, int from, int to) {
    for (int i = from; i < to; ++i) {
      if (!s.is_null(i) && !s.type_is_integer(i)) return false;
    }
    return true;
  };
  bool call_row = c.step();
  std::optional<std::pair<std::int64_t, std::int64_t>> call_key;  // the key of call_start
  std::optional<std::int64_t> call_start;  // MIN(start_ns) of the calls of call_key
  while (g.step()) {
    if (!g.type_is_integer(0) || !integer_or_null(g, 1, 4)) return std::nullopt;
    std::optional<std::int64_t> at;
    if (!g.is_null(1) && !g.is_null(2)) {
      const std::pair key(g.int64(1), g.int64(2));
      if (call_key != key) {
        // Calls before the key (NULL keys sort first and match nothing), then those of the key.
        for (; call_row; call_row = c.step()) {
          if (!integer_or_null(c, 0, 3)) return std::nullopt;
          if (!c.is_null(0) && !c.is_null(1) && std::pair(c.int64(0), c.int64(1)) >= key) break;
        }
        call_key = key;
        call_start.reset();
        for (;
             call_row && !c.is_null(0) && !c.is_null(1) && std::pair(c.int64(0), c.int64(1)) == key;
             call_row = c.step()) {
          if (!integer_or_null(c, 0, 3)) return std::nullopt;
          if (!c.is_null(2))
            call_start = call_start ? std::min(*call_start, c.int64(2)) : c.int64(2);
        }
      }
      at = call_start;
    }
    if (!at && !g.is_null(3)) at = g.int64(3);
    if (!at) continue;  // no time: inside no span
    const auto after =
        std::upper_bound(spans.begin(), spans.end(), *at,
                         [](std::int64_t t, const TimeSpan& span) { return t < span.start_ns; });
    if (after != spans.begin() && std::prev(after)->end_ns > *at) ids.push_back(g.int64(0));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

void Reader::restrict_to(const std::vector<TimeSpan>& spans) {
  if (restricted_) throw Error("'" + path() + "': a window is already applied");
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
  // correlation order (ids_launched_inside), or by SQL for a lean capture (no correlation
  // indexes to read in that order) and for values that are not integers.
  std::vector<TimeSpan> nonempty;
  for (const auto& span : spans) {
    if (span.end_ns != span.start_ns) nonempty.push_back(span);
  }
  for (const char* table : {"kernel", "memcpy", "memset"}) {
    if (!has_table(table)) continue;
    const std::string t = table;
    connection_.exec("CREATE TEMP TABLE fl_" + t + "_ids (id INTEGER PRIMARY KEY)");
    const auto ids =
        lean_ ? std::nullopt : ids_launched_inside(connection_, source(t), calls, nonempty);
    if (ids) {
      connection_.exec("SAVEPOINT fl_window_ids");
      auto insert = connection_.prepare("INSERT INTO temp.fl_" + t + "_ids (id) VALUES (?)");
      for (const std::int64_t id : *ids) {
        insert.bind(1, id);
        insert.run();
      }
      connection_.exec("RELEASE fl_window_ids");
    } else {
      const std::string launch = "COALESCE((SELECT MIN(a.start_ns) FROM " + calls +
                                 " AS a WHERE a.pid = g.pid AND "
                                 "a.correlation_id = g.correlation_id), g.start_ns)";
      connection_.exec("INSERT INTO temp.fl_" + t + "_ids SELECT id FROM (SELECT g.id AS id, " +
                       launch + " AS at FROM " + source(t) + " AS g) WHERE " + inside("at"));
    }
    // A lean capture's kernel is already a TEMP view (Reader.cpp): replaced by the window's.
    connection_.exec("DROP VIEW IF EXISTS temp." + t);
    connection_.exec("CREATE TEMP VIEW " + t + " AS SELECT * FROM " + source(t) +
                     " WHERE id IN temp.fl_" + t + "_ids");
  }
  // Activities placed by their own start (or timestamp).
  const std::pair<const char*, const char*> timed[] = {
      {"api_call", "start_ns"},         {"nvtx_range", "start_ns"}, {"nvtx_mark", "timestamp_ns"},
      {"memory_event", "timestamp_ns"}, {"sync_event", "start_ns"}, {"overhead", "start_ns"}};
  for (const auto& [table, column] : timed) {
    if (!has_table(table)) continue;
    const std::string t = table;
    connection_.exec("DROP VIEW IF EXISTS temp." + t);
    connection_.exec("CREATE TEMP VIEW " + t + " AS SELECT * FROM " + source(t) + " AS x WHERE " +
                     inside(std::string("x.") + column));
  }
  restricted_ = true;
  run_watched_checks();  // the window's own statements read the launch calls' times
}

}  // namespace fuselens::db
