#pragma once
// AnalysisStore: the tables of the analyses' stored results (schema version 10, db/schema.sql:
// stored_analysis_source, stored_analysis). The analyzer computes and checks the results
// (analyzer/store/AnalysisStore.h says what is stored and when it is trusted); this stores and
// reads them.
//
// Freshness: when results are stored, each table of kAnalysisSourceTables gets a fingerprint:
// its largest rowid (one b-tree descent; rows are only ever appended, so a row added later
// changes it), or its row count for the tables declared WITHOUT ROWID (api_context, kernel_arg,
// kernel_metric: one scan of their smallest index, about 0.07 s CPU per ten million rows), or 0
// when the capture lacks the table (as when it is empty: storing adds a version's newer tables). A
// reader compares them with the fingerprints of now.
//
// Errors: db::Error (SQLite failures, a capture too old to take the tables).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// The tables whose rows the stored results are computed from: every table of the schema but
/// the enumerations and the stored aggregates and results themselves. A lean capture's kernel
/// and api_call are views (Layout.h; fingerprint 0): the lean tables under them are listed too,
/// empty in a full-layout capture.
inline constexpr std::string_view kAnalysisSourceTables[] = {
    "strings",        "run",           "process",        "thread",        "device",
    "kernel",         "memcpy",        "memset",         "memory_event",  "api_call",
    "nvtx_range",     "nvtx_mark",     "sync_event",     "overhead",      "frame",
    "cct_node",       "api_context",   "graph_node",     "process_rank",  "merge_source",
    "ceiling",        "kernel_metric", "metric_session", "kernel_arg",    "metric_replay",
    "step_detection", "step",          "capture_window", "kernel_config", "kernel_lean",
    "api_config",     "api_call_lean"};

/// The tables the capture's extent is read from (kExtentAnalysis): the timed tables of GPU work
/// and API calls in both layouts, with the lean layout's configurations (their base times).
inline constexpr std::string_view kExtentSourceTables[] = {
    "kernel",      "memcpy",        "memset",        "api_call",
    "kernel_lean", "kernel_config", "api_call_lean", "api_config"};

/// (table, fingerprint) for every table of kAnalysisSourceTables, in that order.
using TableFingerprints = std::vector<std::pair<std::string, std::int64_t>>;

/// One stored_analysis row.
struct StoredAnalysisRow {
  std::string analysis;     ///< "cct" or "flags"
  std::string window_spec;  ///< the --window text it answers ("steady")
  std::string window_key;   ///< the resolved window it describes (compared as bytes)
  std::string body;         ///< the result (JSON), as stored
};

/// The fingerprints of the capture's tables now (always of the `main` tables: a window's TEMP
/// views are not the capture). Throws db::Error when a query fails.
TableFingerprints table_fingerprints(const Reader& reader);

/// Whether the capture open in `reader` needs the version-10 tables added before storing: true
/// for a capture of versions 4 to 9 without them. Throws db::Error for an older capture ("has
/// schema version N: no tables to store analyses into").
bool analysis_tables_to_add(const Reader& reader);

/// Replaces every stored result of the capture open read-write in `connection` with `rows` and
/// the fingerprints with `sources`, in one transaction (adding the tables first when
/// `add_tables`). The capture is left as it was when this throws.
void write_stored_analyses(Connection& connection, bool add_tables,
                           const TableFingerprints& sources,
                           const std::vector<StoredAnalysisRow>& rows);

/// True when the capture has both tables and `reader` is not restricted to a window.
bool has_stored_analyses(const Reader& reader);
/// The stored fingerprints; nullopt when a row is not (TEXT, INTEGER) or a table repeats.
std::optional<TableFingerprints> read_stored_fingerprints(const Reader& reader);
/// The stored result of `analysis` for `window_spec`; nullopt when there is none or a column is
/// not TEXT, or the body is longer than `max_body_bytes`.
std::optional<StoredAnalysisRow> read_stored_analysis(const Reader& reader,
                                                      std::string_view analysis,
                                                      std::string_view window_spec,
                                                      std::size_t max_body_bytes);

/// True when the stored fingerprints equal the capture's now (`reader` unrestricted, the tables
/// present); false when they differ, a row is damaged or the tables are absent.
bool stored_analyses_fresh(const Reader& reader);

/// The stored_analysis row that holds the capture's extent: analysis "extent", window_spec "",
/// window_key "", body "FIRST_NS LAST_NS" (decimal ns, CUPTI's clock): the first start and the
/// last end of the capture's kernels, copies, memsets and API calls, as the analyses' window
/// resolution reads them from the rows (`SELECT min(start_ns), max(end_ns)` over four tables:
/// about 1.6 s of CPU on ten million kernels, no index leading with those columns); "0 0" for a
/// capture without any. Stored with the other results, under the same fingerprints, and on its
/// own when a run is too large for them (analyzer/store/AnalysisStore.h). It stays fresh while
/// the tables it is read from do (extent_sources_fresh): prof-run stores the steps after it, and
/// the results computed then resolve their windows from it.
inline constexpr std::string_view kExtentAnalysis = "extent";
/// True when every table of kExtentSourceTables has a stored fingerprint equal to its
/// fingerprint now (`reader` unrestricted, the tables present); false otherwise. Rows added to
/// other tables (steps, contexts) leave the extent fresh.
bool extent_sources_fresh(const Reader& reader);
/// The body of the extent row.
std::string extent_body(std::int64_t first_ns, std::int64_t last_ns);
/// The stored extent when it is fresh (extent_sources_fresh) and plausible (0 <= first <= last
/// <= kMaxTimestampNs); nullopt otherwise, never throws for a damaged row (db::Error only when
/// SQLite itself fails).
std::optional<std::pair<std::int64_t, std::int64_t>> stored_capture_extent(const Reader& reader);

}  // namespace fuselens::db
