#pragma once
// AggregateStore: the aggregate-mode tables of a capture (schema version 10, db/schema.sql:
// aggregate_process, aggregate_kernel, aggregate_transfer, aggregate_memory; docs/aggregate.md).
// Writing goes through Writer::write_aggregates (it interns the kernel names); this reads them.
//
// Errors: db::Error with one line naming the table and row for a row that cannot be a
// FuseLens aggregate: a NULL in a NOT NULL column, a count, total, size or time below 0, min >
// max, latency_count > count, a sketch that does not decode (DDSketch.h) or whose count differs
// from the row's, an operation or kind outside its enumeration. A view in place of a table is
// refused earlier by Reader's constructor.

#include "fuselens/db/Aggregate.h"
#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// True when the capture has the version-10 tables and aggregate_process holds a row (an
/// aggregate capture), and the reader is not restricted to a window (the aggregates describe
/// the whole run, not a window).
bool has_aggregates(const Reader& reader);
/// Whether the capture's cct_node table has a row (an aggregate capture's calling-context tree).
bool has_cct_nodes(const Reader& reader);

/// Every aggregate row of the capture (empty set when it has none); kernel rows carry their
/// three names and cct_node ids (node -1 for NULL). Throws db::Error as above.
AggregateSet read_aggregates(const Reader& reader);

/// What an aggregate capture holds as trace: its capture windows (capture_window rows), their
/// distinct reasons joined with ", ", and the records stored as rows (aggregate_process.traced,
/// summed; negative or NULL values count 0).
struct TraceWindows {
  std::int64_t windows = 0;
  std::string reasons;
  std::int64_t traced = 0;
};
TraceWindows trace_windows(const Reader& reader);

}  // namespace fuselens::db
