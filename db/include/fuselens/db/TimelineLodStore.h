#pragma once
// TimelineLodStore: the tables of the timeline's stored level of detail (schema version 10,
// db/schema.sql: timeline_lod_source, timeline_lod). The analyzer computes it and says when it is
// trusted (analyzer/timeline/TimelineLod.h); this stores it, reads it back checking every value's
// type, and streams the item spans it is computed from.
//
// Units: ns on CUPTI's clock; counts of rows. Errors: db::Error (SQLite failures, a capture that
// cannot take the tables, a stored row of the wrong type, NULL or size: the message names it).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <utility>

#include "fuselens/db/Cursor.h"
#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// The tables the level of detail comes from (timeline_lod_source.table_name), in this order.
inline constexpr std::string_view kTimelineLodSourceTables[] = {"kernel", "memcpy", "memset",
                                                                "api_call"};

/// timeline_lod.lane_kind: the analyzer's LaneKind values of the lanes it covers.
inline constexpr std::int64_t kLodGpuLane = 0;
inline constexpr std::int64_t kLodApiLane = 2;

/// One timeline_lod row: one level of one row of a lane (see db/schema.sql).
struct StoredLodLevel {
  std::int64_t lane_kind = kLodGpuLane;
  std::int64_t device_id = 0, stream_id = 0, pid = 0, tid = 0, depth = 0;
  std::int64_t level = 0;
  std::int64_t begin_ns = 0, bucket_ns = 1;
  std::int64_t item_count = 0, first_ns = 0, last_ns = 0, max_duration_ns = 0;
  std::vector<std::int64_t> busy_ns;  ///< per bucket
  std::vector<std::int64_t> starts;   ///< per bucket
};

/// One timeline_lod_source row.
struct LodSource {
  std::string table;
  std::int64_t max_id = 0;
};

/// Replaces the stored level of detail of the capture open read-write in `connection` with
/// `levels` in one transaction, recording the largest id of each kTimelineLodSourceTables
/// table (in a lean capture, Layout.h, of the views kernel and api_call). Adds the version-10
/// tables to a version-9 capture (and sets its user_version to 10); throws db::Error for an older
/// one ("schema version N: no timeline level of detail to store into"). The capture is left as it
/// was when this throws.
void write_timeline_lod(Connection& connection, const std::vector<StoredLodLevel>& levels);

/// True when the capture has both tables, as tables (not views).
bool has_timeline_lod_tables(const Reader& reader);
/// Every timeline_lod_source row, as stored. Throws db::Error on a NULL or non-integer max_id.
std::vector<LodSource> read_timeline_lod_sources(const Reader& reader);
/// The number of rows of the kTimelineLodSourceTables present in the capture (their sum).
std::int64_t lod_source_row_count(const Reader& reader);
/// The span the timeline covers, CUPTI ns: the least start and the greatest end (a row without an
/// end: its start) of kernel, memcpy, memset, api_call and nvtx_range, and the memory events'
/// times; {0, 0} for a capture without rows. Each table present is read with one aggregate query,
/// but for the kernels, copies, memsets and calls when the capture's extent is stored and fresh
/// (stored_capture_extent, AnalysisStore.h): then the extent is their span.
std::pair<std::int64_t, std::int64_t> timeline_time_span(const Reader& reader);
/// The largest id of `table` (one of kTimelineLodSourceTables), 0 when empty.
std::int64_t lod_source_max_id(const Reader& reader, std::string_view table);
/// Every timeline_lod row, ordered by its key. Throws db::Error naming the row when a column is
/// NULL or not an integer, or a blob's size is not a whole number of int64 or differs between
/// busy and starts.
std::vector<StoredLodLevel> read_timeline_lod(const Reader& reader);

/// One item for the level of detail: its lane key and span.
struct LodItem {
  std::int64_t device_id = 0, stream_id = 0, pid = 0, tid = 0, start_ns = 0, end_ns = 0;
};
/// Every kernel, copy and memset: device_id, stream_id, pid, start_ns, end_ns, as scanned.
Cursor<LodItem> lod_gpu_items(const Reader& reader);
/// Every API call: pid, tid, start_ns, end_ns, ordered by (pid, tid, start_ns, end_ns DESC)
/// (load_timeline's order, so that a call's enclosing call comes first).
Cursor<LodItem> lod_api_items(const Reader& reader);

}  // namespace fuselens::db
