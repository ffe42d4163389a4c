// leave_out_window_edge_records (WindowEdges.h): GPU records launched outside every capture window.

#include "fuselens/db/WindowEdges.h"

#include <string>

#include "fuselens/db/Layout.h"

namespace fuselens::db {
namespace {

// The correlation-id ranges of the windows' recorded calls, per process: a temporary table, so
// that the three tables' checks read a few rows instead of grouping api_call three times. A
// window still open when the process ended reaches to every later id: calls it made may be
// missing for another reason (a process killed before its last API buffer was written).
constexpr const char* kSpans =
    "CREATE TEMP TABLE fl_window_calls AS"
    " SELECT w.pid AS pid, MIN(a.correlation_id) AS lo,"
    " CASE WHEN w.end_ns IS NULL THEN 9223372036854775807 ELSE MAX(a.correlation_id) END AS hi"
    " FROM capture_window AS w JOIN api_call AS a ON a.pid = w.pid AND a.start_ns >= w.start_ns"
    " AND (w.end_ns IS NULL OR a.start_ns <= w.end_ns)"
    " GROUP BY w.id";

// The rows of `table` to leave out; the cheap range test first, the call lookup (an index probe of
// api_by_correlation) only for rows outside every range.
std::string outside(const std::string& table) {
  return " FROM " + table + " AS g WHERE g.pid IN (SELECT pid FROM capture_window)" +
         " AND g.correlation_id <> 0"
         " AND NOT EXISTS (SELECT 1 FROM temp.fl_window_calls AS s WHERE s.pid = g.pid"
         " AND g.correlation_id BETWEEN s.lo AND s.hi)"
         " AND EXISTS (SELECT 1 FROM api_call AS a WHERE a.pid = g.pid)"
         " AND NOT EXISTS (SELECT 1 FROM api_call AS a WHERE a.pid = g.pid"
         " AND a.correlation_id = g.correlation_id)";
}

}  // namespace

WindowEdgeRecords leave_out_window_edge_records(Connection& connection) {
  WindowEdgeRecords left;
  if (connection.query_int("SELECT COUNT(*) FROM capture_window") == 0) return left;
  const bool lean = capture_layout(connection) == TraceLayout::Lean;
  in_transaction(connection, [&] {
    connection.exec("DROP TABLE IF EXISTS temp.fl_window_calls");
    connection.exec(kSpans);
    std::uint64_t* counts[] = {&left.kernels, &left.memcpys, &left.memsets};
    const char* tables[] = {"kernel", "memcpy", "memset"};
    for (int i = 0; i < 3; ++i) {
      const std::string rows = outside(tables[i]);
      const auto n = connection.query_int("SELECT COUNT(*)" + rows);
      *counts[i] = n > 0 ? static_cast<std::uint64_t>(n) : 0;
      if (n > 0) {
        // A lean capture's kernel is a view (Layout.h): its rows are kernel_lean's, same ids.
        const std::string target = lean && i == 0 ? "kernel_lean" : tables[i];
        connection.exec("DELETE FROM " + target + " WHERE id IN (SELECT g.id" + rows + ")");
      }
    }
    connection.exec("DROP TABLE temp.fl_window_calls");
  });
  return left;
}

}  // namespace fuselens::db
