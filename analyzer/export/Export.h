#pragma once
// Export: what `prof-analyze export` writes, and the inputs every export format shares.
//
// Formats (docs/formats.md documents each layout, column and key):
//   Html         one self-contained report (ExportHtml.h)
//   Json, Csv    every analysis of one or two captures in one document (ExportTables.h)
//   ChromeTrace  Chrome Trace Event JSON for Perfetto and chrome://tracing (ExportChromeTrace.h)
//
// An ExportRun is one capture's analyses, read once and handed to the Html, Json and Csv writers;
// ChromeTrace streams the records straight from the capture instead (it never holds them).
// Two runs (FILE FILE2) are labelled "A" and "B"; `side_by_side` joins their summary tables by
// name. When further analyses exist (flags, compare, calling contexts), their results become
// members of ExportRun (per capture) or of the two-run documents, next to `summary`.
//
// Units: *_ns nanoseconds (times on CUPTI's clock, see db/schema.sql), bytes in bytes.
// Errors: db::Error when a query fails.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cct/CallingContext.h"
#include "cct/CallingContextData.h"
#include "compare/Compare.h"
#include "export/ExportRankLanes.h"
#include "flags/Flags.h"
#include "fuselens/db/Reader.h"
#include "ranks/Ranks.h"
#include "roofline/Peaks.h"
#include "roofline/Roofline.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

enum class ExportFormat { Html, Json, Csv, ChromeTrace };

/// "html", "json", "csv", "chrome-trace" -> the format; anything else -> empty.
std::optional<ExportFormat> parse_export_format(std::string_view name);
/// The command-line name of `format` ("chrome-trace", ...).
const char* to_string(ExportFormat format);

/// Earliest and latest timestamp of the records an export shows: kernel, memcpy and memset
/// start/end, memory_event timestamps, api_call start/end, nvtx_range start/end and nvtx_mark
/// timestamps (CUPTI ns). `empty` when the capture holds none of them (begin = end = 0).
struct TimeRange {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  bool empty = true;
};

/// One full scan of each table above (min and max of indexed and unindexed columns alike).
TimeRange capture_time_range(const db::Reader& reader);

/// Device memory in use on one device over time: the running sum of SummaryFormat's device
/// memory table (memory kind Device, +bytes per allocation, -bytes per release, in
/// (timestamp, row id) order), thinned to a bounded number of points for charts.
struct MemoryPoint {
  std::int64_t time_ns = 0;  ///< CUPTI ns
  std::int64_t bytes = 0;    ///< in use just after the event
};
struct DeviceMemorySeries {
  std::uint32_t device_id = 0;
  std::int64_t events = 0;      ///< memory events of the device (before thinning)
  std::int64_t peak_bytes = 0;  ///< highest running sum (kept by the thinning)
  /// In time order. With at most `max_points` events every event is a point; otherwise the
  /// device's time span is cut into max_points / 2 equal buckets and each non-empty bucket keeps
  /// two points: its highest value (at the bucket's first event time) and its last value (at
  /// the bucket's last event time), so peaks survive.
  std::vector<MemoryPoint> points;
};

/// Series of every device with device-memory events, by device id. Two passes over
/// memory_event (counts per device, then the ordered events); memory O(devices * max_points).
std::vector<DeviceMemorySeries> device_memory_series(const db::Reader& reader,
                                                     std::size_t max_points = 2000);

/// The further analyses of one capture that the HTML report shows (ExportHtml.h). Each is
/// either present or absent with a note saying why (the analysis threw, or the capture has no
/// data for it): loading them never fails the export.
struct ExportAnalyses {
  std::optional<PeaksChoice> peaks;  ///< choose_peaks("auto")
  std::string peaks_note;
  std::optional<CctReport> calling_contexts;  ///< top-down, by GPU time (also the flame graph)
  std::string calling_contexts_note;
  std::optional<FlagsReport> flags;  ///< every rule, default thresholds, short kernel names
  std::string flags_note;
  /// The comparison given to load_export_analyses (`prof-analyze export --baseline GLOB
  /// --candidate GLOB`); without one, compare_ranges("*/unfused/*", "*/fused/*") when the
  /// capture has NVTX ranges named op/unfused/shape and op/fused/shape; absent otherwise.
  std::optional<CompareReport> variants;
  std::string variants_note;
  /// With the auto-detected comparison: range_stats of the capture (the comparison's
  /// projection), so the heatmap shows every variant of each op and shape (variant_matrix:
  /// unfused, fused, then e.g. cutlass_fused, cutlass_unfused), not only the compared pair.
  /// Empty with an explicit comparison (the heatmap then shows its two sides).
  std::vector<RangeStats> variant_ranges;
  std::optional<RooflineReport> roofline;  ///< analyze_roofline, peaks "auto"
  std::string roofline_note;
  /// analyze_ranks (ranks/Ranks.h): by load_export_analyses when its reader is not restricted
  /// to a window (the ranks' steps are numbered over the whole capture); a caller that
  /// restricted the reader computes it before restricting (prof-analyze export does). The
  /// report shows a "Ranks" section only when RanksReport::distributed.
  std::optional<RanksReport> ranks;
  std::string ranks_note;
  /// load_rank_lane_strip: kernels per rank and device (captures with process_rank rows only;
  /// absent without a note otherwise).
  std::optional<RankLaneStrip> rank_lanes;
  std::string rank_lanes_note;
};

/// False when `reader`'s capture has one process (or none) and no process_rank rows: then
/// analyze_ranks would read every launch to report a run that is not distributed, which the
/// HTML report does not show (its Ranks section needs RanksReport::distributed).
bool may_be_distributed(const db::Reader& reader);

/// Results stored when the run ended (analyzer/store/AnalysisStore.h) for the window the export
/// describes, read by the caller before it restricted the reader (load_stored_cct,
/// load_stored_flags); load_export_analyses takes them instead of computing the cct and flags
/// from the rows (ten million kernels: 6 GB of memory otherwise).
struct StoredAnalyses {
  std::optional<std::vector<cct::OperationGroup>> cct_groups;  ///< the default window's cct groups
  std::optional<FlagsReport> flags;  ///< the default flags report (stored_flags_config)
};

/// Runs the analyses above; never throws (each failure becomes that analysis's note). A
/// non-null `comparison` (compare_ranges of explicit patterns) becomes `variants` instead of the
/// unfused/fused auto-detection. `window` (resolved and applied to `reader`) is the window the
/// flags analysis describes (its verdict, start-up and per-step costs); nullptr: the whole
/// capture. `frames`: the frames of the calling contexts and of the flags' call sites.
/// `stored`: results of the same window stored when the run ended, used where present (the flags
/// report only when `frames` is FramesMode::Auto, the mode it was stored for).
ExportAnalyses load_export_analyses(const db::Reader& reader,
                                    const CompareReport* comparison = nullptr,
                                    const Window* window = nullptr,
                                    FramesMode frames = FramesMode::Auto,
                                    const StoredAnalyses* stored = nullptr);

/// One capture's analyses as the Html, Json and Csv exports show them.
struct ExportRun {
  std::string label;  ///< "A" for FILE, "B" for FILE2
  /// The window the analyses describe (Window::description, docs/windows.md); "" when the
  /// caller chose none (the whole capture).
  std::string window;
  Summary summary;
  TimeRange time_range;
  std::vector<DeviceMemorySeries> device_memory;
  /// Flags, calling contexts, compare and roofline for the HTML report; absent when
  /// load_export_run was asked not to compute them (the Json and Csv exports).
  std::optional<ExportAnalyses> analyses;
  /// compare_ranges of the --baseline/--candidate patterns given to `prof-analyze export`;
  /// absent without them. The Json export writes it as "comparison" (compare_to_json); the
  /// HTML report shows it in place of the unfused/fused auto-detection.
  std::optional<CompareReport> comparison;
};

/// Reads every analysis of the capture opened by `reader` (summarize, capture_time_range,
/// device_memory_series, and with `with_analyses` load_export_analyses(reader, comparison,
/// window, frames, stored)).
/// A non-null `comparison` is also copied into ExportRun::comparison. Throws db::Error when a
/// query of the summary fails.
ExportRun load_export_run(const db::Reader& reader, std::string label,
                          NameKind kernel_names = NameKind::Demangled, bool with_analyses = true,
                          const CompareReport* comparison = nullptr, const Window* window = nullptr,
                          FramesMode frames = FramesMode::Auto,
                          const StoredAnalyses* stored = nullptr);

/// One row of a summary table of two runs joined by name. Runs that lack the name count 0.
struct SideBySideRow {
  std::string name;
  std::int64_t a_total_ns = 0, b_total_ns = 0;
  std::int64_t a_count = 0, b_count = 0;  ///< instances / calls / operations
  /// b_total_ns / a_total_ns (above 1: B took longer); empty when a_total_ns is 0.
  std::optional<double> ratio;
};

/// The kernel, memory-operation, API and NVTX tables of two summaries joined by row name.
/// Rows are sorted by max(a_total_ns, b_total_ns) descending, then name ascending. Kernel names
/// are matched in the NameKind each summary was made with (use the same for both).
struct SideBySide {
  std::vector<SideBySideRow> kernels;
  std::vector<SideBySideRow> memory_operations;
  std::vector<SideBySideRow> api;
  std::vector<SideBySideRow> nvtx;
};

SideBySide side_by_side(const Summary& a, const Summary& b);

}  // namespace fuselens::analyzer
