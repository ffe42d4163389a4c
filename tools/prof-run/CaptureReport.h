#pragma once
// The one line prof-run prints when a run ends: kernels, memcpys, total GPU time, peak device
// memory, and whether the workload used CUDA at all.

#include <string>

namespace fuselens::collector {

/// Reads the finalized capture at `path` through the analyzer. Throws db::Error.
std::string capture_report_line(const std::string& path);

}  // namespace fuselens::collector
