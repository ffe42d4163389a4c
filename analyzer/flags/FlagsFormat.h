#pragma once
// FlagsFormat: writes a FlagsReport (Flags.h) as text, CSV or JSON.
//
// Table: a header (capture, rules run, thresholds changed from their defaults), the verdict
//   (FlagsVerdict.h: its headline, "top causes" numbered, and for the whole capture the
//   start-up line; a narrower window names its start-up on the "Window:" line the command
//   prints), a summary of hits and time at stake per rule, then the hits ranked across rules
//   ("Hits, ranked by time at stake per step:"), each on three lines ("[rule] where": subject,
//   device/stream, NVTX range, pid/tid; time at stake, its share of the window, count and first
//   instance; what was measured, prefixed "every step (N of M): ..." for a hit repeated every
//   step; "-> " what to do), plus a "called from <call path>" line when the calling context is
//   known. Times relative to the report's origin are "+<duration>".
// CSV (RFC 4180): one table. A header row, then a `verdict` row, a `startup` row when the
//   window has a start-up, then one row per hit in rank order, with the columns
//   rule,time_ns,count,subject,device_id,stream_id,pid,tid,range,context,first_ns,detail,advice,
//   metrics (context: the call path, empty when unknown)
//   Missing ids are empty fields; first_ns is absolute (CUPTI clock); metrics is "key=value"
//   pairs joined by ';' (window_percent, and with steps steps_with, per_step_ns,
//   per_step_count, step_percent: FlagsVerdict.h).
//   The verdict row: rule "verdict", time_ns the mean step span (or the window's span), count
//   the steps (0: none), subject the kind ("host-bound"), detail the headline, advice the
//   causes joined by " | ", metrics steps, busy_percent, compute_percent,
//   non_compute_percent, idle_percent, host_wait_percent, kernel_wait_percent,
//   other_wait_percent, sync_percent. The startup row: rule "startup", time_ns its length,
//   detail its line.
// JSON: {"capture", "origin_ns", "rules_run": [...], "thresholds": {key: value},
//   "verdict": {FlagsVerdict's fields by name, "window_inside_ns"},
//   "summary": [{"rule", "title", "hits", "time_ns"}], "hits": [{the CSV columns, with
//   null for missing ids and "metrics" as an object}] in rank order}.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <cstddef>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "flags/Flags.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// Writes `report` to `out` in `format`. `table_limit` > 0 prints at most that many hits in the
/// table (the highest ranked; a line says how many were left out); CSV and JSON always hold
/// every hit.
void write_flags(std::ostream& out, const FlagsReport& report, OutputFormat format,
                 std::size_t table_limit = 0);

/// The JSON document that write_flags writes for OutputFormat::Json.
nlohmann::json flags_to_json(const FlagsReport& report);

/// The verdict as an object of its fields by name (FlagsVerdict), as flags_to_json writes it
/// (which adds "window_inside_ns") and the stored flags report keeps it (store/FlagsStoreJson.h).
nlohmann::json verdict_to_json(const FlagsVerdict& verdict);

}  // namespace fuselens::analyzer
