#pragma once
// SummaryStore: the tables of the summary's stored aggregates (schema version 4, db/schema.sql:
// summary_source, summary_duration, summary_nvtx_work; version 10: summary_nvtx_process). The
// analyzer computes the aggregates
// (analyzer/SummaryStore.h says what and when they are trusted); this stores and reads them.
//
// Units: ns for durations, counts of rows. Errors: db::Error (SQLite failures, a capture that
// cannot take the tables).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/db/Cursor.h"
#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// The tables the stored aggregates come from (summary_source.table_name), in this order.
inline constexpr std::string_view kSummarySourceTables[] = {"kernel", "api_call", "nvtx_range"};

/// One summary_duration row: the duration statistics of the rows of one name id.
struct StoredDuration {
  std::int64_t name_id = 0;
  std::int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double median_ns = 0, stddev_ns = 0;
};

/// One summary_nvtx_work row: the projected kernels and GPU time of one ended NVTX range.
struct StoredRangeWork {
  std::int64_t range_id = 0, kernels = 0, gpu_ns = 0;
};

/// One summary_source row: the row count and largest id of a source table when stored.
struct SummarySource {
  std::string table;
  std::int64_t row_count = 0, max_id = 0;
};

/// What write_summary_aggregates stores.
struct SummaryAggregateRows {
  /// Source "kernel_short", by short_name_id (the names compare and `--names short` group by);
  /// a capture stored before it has none and reads the rows for them.
  std::vector<StoredDuration> kernels_short;
  std::vector<StoredDuration> kernels;        ///< source "kernel", by demangled_name_id
  std::vector<StoredDuration> calls;          ///< source "api_call", by name_id
  std::vector<StoredRangeWork> nvtx_work;     ///< the thread projection (summary_nvtx_work)
  std::vector<StoredRangeWork> nvtx_process;  ///< the process projection (summary_nvtx_process)
};

/// Whether the capture at `path` (open in `reader`) needs the summary tables added before
/// storing: true for a version-3 capture without them. Throws db::Error for an older capture
/// without them ("has schema version N: no summary tables to store into").
bool summary_tables_to_add(const Reader& reader, const std::string& path);

/// Replaces the stored aggregates of the capture open read-write in `connection` with `rows` in
/// one transaction (adding the tables first when `add_tables`), recording the row count and
/// largest id of each kSummarySourceTables table; a capture written before summary_nvtx_process
/// gets the schema's newer tables first. The capture is left as it was when this throws.
void write_summary_aggregates(Connection& connection, bool add_tables,
                              const SummaryAggregateRows& rows);

/// True when the capture has the three summary tables.
bool has_summary_tables(const Reader& reader);
/// Every summary_source row, as stored.
std::vector<SummarySource> read_summary_sources(const Reader& reader);
/// The largest id of `table` (one of kSummarySourceTables), 0 when empty.
std::int64_t max_row_id(const Reader& reader, std::string_view table);
/// The summary_duration rows of `source`, ordered by name_id.
Cursor<StoredDuration> summary_durations(const Reader& reader, std::string_view source);
/// The summary_nvtx_work rows, as stored.
Cursor<StoredRangeWork> summary_nvtx_work(const Reader& reader);
/// True when the capture has summary_nvtx_process and `reader` is not restricted.
bool has_summary_nvtx_process(const Reader& reader);
/// The summary_nvtx_process rows, as stored (call only when has_summary_nvtx_process).
Cursor<StoredRangeWork> summary_nvtx_process(const Reader& reader);

}  // namespace fuselens::db
