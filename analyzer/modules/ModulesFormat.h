#pragma once
// Text, CSV and JSON output of the module view (Modules.h).
//
// Text: a header line with the backward share attributed to modules ("Backward GPU time in
// modules: 97.3 % (12.345 ms of 12.690 ms)") and the work outside every module, then an indented
// tree, one row per module path prefix: Module, Calls, Fwd GPU (incl), Fwd GPU (excl),
// Bwd GPU (incl), Bwd GPU (excl), Launches (incl, forward + backward), Bytes (incl), Peak fwd,
// Peak bwd ("-" without memory events).
// CSV (stable columns): path, name, depth, parent_path, calls, fwd_incl_gpu_time_ns,
// fwd_excl_gpu_time_ns, bwd_incl_gpu_time_ns, bwd_excl_gpu_time_ns, fwd_incl_launches,
// fwd_excl_launches, bwd_incl_launches, bwd_excl_launches, fwd_incl_bytes, fwd_excl_bytes,
// bwd_incl_bytes, bwd_excl_bytes, peak_fwd_bytes, peak_bwd_bytes (-1: no memory events).
// JSON: {"backward_attributed_share", "backward_gpu_time_ns", "forward_outside": {gpu_time_ns,
// launches, bytes}, "backward_outside": {...}, "rows": [{the CSV keys}]}.

#include <optional>
#include <ostream>

#include "modules/Modules.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// Writes `report` in `format`; rows deeper than `max_depth` (roots are 0) are left out (their
/// cost stays in their ancestors' inclusive columns).
void write_modules(std::ostream& out, const ModulesReport& report, OutputFormat format,
                   std::optional<int> max_depth = std::nullopt);

}  // namespace fuselens::analyzer
