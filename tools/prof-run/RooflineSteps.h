#pragma once
// prof-run's roofline steps: --measure-ceilings runs prof-ceilings (beside prof-run, or in the
// build tree's tools/prof-ceilings) into the new capture before the workload starts; after the
// run, one line says what the counter sessions (--metrics) recorded and what they cost, or why
// they failed.

#include <filesystem>
#include <string>

#include "fuselens/db/Reader.h"

namespace fuselens::collector {

/// Runs `<tools_dir>/prof-ceilings --into <capture>` (its output goes to stderr) and returns its
/// exit status; 127 when it cannot be found or started.
int measure_ceilings(const std::filesystem::path& tools_dir, const std::string& capture);

/// "counters: set 'roofline', 19 metrics, 5 replay passes per kernel, 126 launches profiled"
/// per session, or "counters FAILED on device D: <why>", or a line saying that none were
/// recorded, of the capture open in `reader`. Never throws.
std::string counters_report_line(const db::Reader& reader);

}  // namespace fuselens::collector
