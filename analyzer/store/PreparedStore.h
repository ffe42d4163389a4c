#pragma once
// PreparedStore: a stored result computed on a connection of its own and stored later. prof-run's
// finalization computes the summary's aggregates, the cct/flags results and the timeline's level
// of detail at once, each on its own thread and read-only connection (tools/prof-run/
// FinalizeCapture.cpp), then stores them one after another through its read-write connection:
// on ten million launches they took 6.2, 11.6 and 10.3 s one after another on the H100's host
// (docs/BENCHMARKS.md).

#include <functional>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

/// Stores what was computed through `reader`, open ReadWrite on the same capture, its rows
/// unchanged since, in one transaction. Throws db::Error when the write fails (the capture is
/// then left as it was).
using PreparedStore = std::function<void(db::Reader& reader)>;

}  // namespace fuselens::analyzer
