#pragma once
// FlagsFormat: writes a FlagsReport (Flags.h) as text, CSV or JSON.
//
// Table: a header (capture, rules run, thresholds changed from their defaults), a summary of hits
//   and time at stake per rule, then one block per rule with hits: each hit on three lines
//   (where: subject, device/stream, NVTX range, pid/tid, count and time at stake; what was
//   measured; "-> " what to do), plus a "called from <call path>" line when the calling context
//   is known. Times relative to the report's origin are "+<duration>".
// CSV (RFC 4180): a header row, then one row per hit with the columns
//   rule,time_ns,count,subject,device_id,stream_id,pid,tid,range,context,first_ns,detail,advice,
//   metrics (context: the call path, empty when unknown)
//   Missing ids are empty fields; first_ns is absolute (CUPTI clock); metrics is "key=value"
//   pairs joined by ';'.
// JSON: {"capture", "origin_ns", "rules_run": [...], "thresholds": {key: value},
//   "summary": [{"rule", "title", "hits", "time_ns"}], "hits": [{the CSV columns, with
//   null for missing ids and "metrics" as an object}]}.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <cstddef>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "flags/Flags.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// Writes `report` to `out` in `format`. `table_limit` > 0 prints at most that many hits per rule
/// in the table (the highest time at stake first; a line says how many were left out); CSV and
/// JSON always hold every hit.
void write_flags(std::ostream& out, const FlagsReport& report, OutputFormat format,
                 std::size_t table_limit = 0);

/// The JSON document that write_flags writes for OutputFormat::Json.
nlohmann::json flags_to_json(const FlagsReport& report);

}  // namespace fuselens::analyzer
