// Reader::restrict_to: a window over a capture as TEMP views that shadow its tables (SQLite
// resolves an unqualified table name in temp before main), so every query of db/ reads only the
// window's rows without a copy of the capture and without a change to the file.

#include <string>
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
  // GPU work: the ids of the rows whose launch started inside the window, found once.
  for (const char* table : {"kernel", "memcpy", "memset"}) {
    if (!has_table(table)) continue;
    const std::string t = table;
    const std::string launch = "COALESCE((SELECT MIN(a.start_ns) FROM " + calls +
                               " AS a WHERE a.pid = g.pid AND "
                               "a.correlation_id = g.correlation_id), g.start_ns)";
    connection_.exec("CREATE TEMP TABLE fl_" + t + "_ids (id INTEGER PRIMARY KEY)");
    connection_.exec("INSERT INTO temp.fl_" + t + "_ids SELECT id FROM (SELECT g.id AS id, " +
                     launch + " AS at FROM " + source(t) + " AS g) WHERE " + inside("at"));
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
}

}  // namespace fuselens::db
