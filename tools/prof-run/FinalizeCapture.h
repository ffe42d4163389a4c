#pragma once
// prof-run's finalization of a capture after the workload ended: the run's end and the indexes
// (db::finalize_capture), the GPU work launched outside every capture window left out
// (db/WindowEdges.h), then, each optional and reported in one line when it fails, the summary's
// stored aggregates, the steps, the cct/flags results (up to kMaxStoredAnalysisRecords GPU
// records) and the timeline's level of detail; then the report lines. Progress on stderr while it
// runs (FinalizeProgress.h).

#include <string>

#include "fuselens/db/Records.h"

namespace fuselens::tools {

/// Finalizes `path` with `end` and prints where it is and what it holds; false when it failed.
/// One read-write connection serves every step: the run's end and the indexes, the summary's
/// stored aggregates, the report line and the counters line.
bool finalize_capture(const std::string& path, const fuselens::db::RunEnd& end, bool metrics);

}  // namespace fuselens::tools
