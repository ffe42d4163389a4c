#pragma once
// The one line prof-run prints when a run ends: kernels, memcpys, total GPU time, peak device
// memory, and whether the workload used CUDA at all.

#include <string>

#include "fuselens/db/Reader.h"

namespace fuselens::collector {

/// Reads the finalized capture open in `reader` through the analyzer (the summary; a reader
/// built with TimestampCheck::DeferLargeTables checks the kernel and api_call timestamps only
/// where the summary reads their rows). Throws db::Error.
std::string capture_report_line(const db::Reader& reader);

}  // namespace fuselens::collector
