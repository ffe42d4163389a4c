#pragma once
// prof-run's finalization of a capture after the workload ended, in WAL mode throughout
// (db::begin_finalize, end_finalize): api_by_correlation and the GPU work launched outside every
// capture window left out (db/WindowEdges.h); then, while the other indexes are built, the steps
// (stored between two index builds) and the stored results, each optional and reported in one line
// when it fails, computed at once on connections of their own after the steps: the summary's
// aggregates (after the indexes they read too), the cct/flags results (above
// kMaxStoredAnalysisRecords GPU records cct when it streams, flags when memory allows) and the
// timeline's level of detail; then the run's end, last, and the report lines. Progress on stderr
// while it runs (FinalizeProgress.h).

#include <cstdint>
#include <optional>
#include <string>

#include "fuselens/db/Records.h"
#include "store/AnalysisStore.h"

namespace fuselens::tools {

/// The bounds the stored results are computed under.
struct StoreLimits {
  /// Above this many GPU records cct is stored only when its groups stream, and flags only when
  /// analyzer::flags_fit says the memory allows.
  std::int64_t in_memory_records = analyzer::kMaxStoredAnalysisRecords;
  /// The memory flags_fit weighs, bytes; nullopt: MemAvailable of /proc/meminfo.
  std::optional<std::int64_t> available_bytes;
};

/// Finalizes `path` with `end` and prints where it is and what it holds; false when it failed.
/// One read-write connection writes every step: the indexes, the steps, the stored results and
/// the run's end; it reads the report line and the counters line.
bool finalize_capture(const std::string& path, const fuselens::db::RunEnd& end, bool metrics,
                      const StoreLimits& limits = {});

}  // namespace fuselens::tools
