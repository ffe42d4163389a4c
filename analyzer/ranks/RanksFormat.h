#pragma once
// prof-analyze ranks: the table, CSV and JSON writers of a RanksReport (Ranks.h).
//
// Table: one row per (step, rank), then one per rank over the window, then one line per step
// naming its straggler. CSV: the same three tables, each under its header, separated by a blank
// line. JSON: {"ranks": [...], "rows": [...], "summary": [...], "steps": [...], "notes": [...]}.
// Times are ns in CSV and JSON, ms in the table; shares are percentages of the span in the
// table and CSV, fractions in JSON. The command adds the window (write_windowed).
// Errors: none of its own; stream errors are left in the stream's state.

#include <ostream>
#include <string>

#include "ranks/Ranks.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// Writes `report` in `format`.
void write_ranks(std::ostream& out, const RanksReport& report, OutputFormat format);

/// "0" or "0,1": the devices of a rank.
std::string devices_text(const RankInfo& rank);

}  // namespace fuselens::analyzer
