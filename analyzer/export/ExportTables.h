#pragma once
// ExportTables: every analysis of one or two captures as one JSON document or one CSV file.
// docs/formats.md documents both layouts; the summary tables reuse SummaryFormat's columns and
// keys unchanged (summary_to_json, write_summary), so `prof-analyze summary --format csv|json`
// and `prof-analyze export --format csv|json` never drift apart.
//
// JSON:
//   {"format": "fuselens-export", "format_version": 1,
//    "runs": [{"label": "A", "summary": <summary_to_json>}, {"label": "B", ...}],
//    "side_by_side": {"kernels": [...], "memory_operations": [...], "api": [...],
//                     "nvtx": [...]}},                     <- only with two runs
//    "comparison": <compare_to_json>}   <- only when the first run has a comparison
//                                          (export --baseline GLOB --candidate GLOB)
//   side_by_side rows: {"name", "a_total_ns", "b_total_ns", "ratio" (null when A is 0),
//                       "a_count", "b_count"}.
// CSV: sections as in SummaryFormat ("# <section>" line, header row, rows, blank line between
//   sections), named:
//   "# runs"                     label,path,host_name,fuselens_version,trace,start_utc_ns,
//                                end_utc_ns,end_reason,exit_status,exit_signal,dropped_records,
//                                cuda_processes,kernel_names,working_directory,command_line
//                                (command_line: the argv JSON array as text)
//   "# <label>.summary.<table>"  table = kernels, memory_operations, api, nvtx, device_memory;
//                                the columns of `prof-analyze summary --format csv`
//   "# side_by_side.<table>"     name,a_total_ns,b_total_ns,ratio,a_count,b_count (two runs;
//                                ratio empty when A is 0)
// Extension point: later analyses add keys to each run object ("flags", ...) and CSV sections
// "# <label>.<analysis>.<table>"; analyses of two runs add top-level keys ("comparison") and
// sections "# comparison.<table>".
//
// Invalid UTF-8 in names (NVTX text is the user's bytes) is replaced, never thrown.
// Errors: none of their own; stream errors are left in the stream's state.

#include <iosfwd>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/Export.h"

namespace fuselens::analyzer {

inline constexpr int kExportFormatVersion = 1;

/// The JSON document of `runs` (one or two; side_by_side only when there are exactly two).
nlohmann::json export_to_json(const std::vector<ExportRun>& runs);

/// export_to_json(runs), indented by 2, followed by a newline.
void write_export_json(std::ostream& out, const std::vector<ExportRun>& runs);

/// The CSV sections of `runs` as described above.
void write_export_csv(std::ostream& out, const std::vector<ExportRun>& runs);

}  // namespace fuselens::analyzer
