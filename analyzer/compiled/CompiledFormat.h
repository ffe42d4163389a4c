#pragma once
// CompiledFormat: writes a CompiledReport (Compiled.h) as text, CSV or JSON.
//
// Table: the two captures, the totals per step (eager -> compiled GPU time, launches, bytes,
//   speedup, marks read), "Fusions" (one row per compiled kernel that ran: Kernel, Kind, Ops,
//   Lines (its source nodes' user lines), eager and compiled GPU time and launches per step,
//   Speedup, the eager kernels it replaced), then "By op" or "By module" with a last row
//   "<not fused>" (eager work of ops no fusion lists, compiled work no mark explains).
// CSV (RFC 4180): sections "# fusions", "# groups", "# totals", each a header row and rows:
//   fusions: kernel,kind,graph,ops,lines,modules,site,eager_ns,eager_launches,eager_bytes,
//            compiled_ns,compiled_launches,compiled_bytes,speedup,eager_kernels
//            (lists joined with ';', figures per step)
//   groups:  by,name,eager_ns,eager_launches,eager_bytes,compiled_ns,compiled_launches,
//            compiled_bytes,speedup
//   totals:  eager_steps,compiled_steps,marks,eager_ns,eager_launches,eager_bytes,compiled_ns,
//            compiled_launches,compiled_bytes,speedup,eager_unmatched_ns,compiled_unmatched_ns
// JSON: {"eager": path, "compiled": path, "by", "totals": {...}, "fusions": [...],
//   "groups": [...]}; rows carry the CSV keys, lists as arrays, missing speedups null.
// Errors: none of its own; stream errors stay in the stream's state.

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "compiled/Compiled.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// Writes `report` to `out` in `format`.
void write_compiled(std::ostream& out, const CompiledReport& report, OutputFormat format);

/// The JSON document write_compiled writes for OutputFormat::Json.
nlohmann::json compiled_to_json(const CompiledReport& report);

}  // namespace fuselens::analyzer
