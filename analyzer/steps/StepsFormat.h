#pragma once
// StepsFormat: `prof-analyze steps` output: one line per step, the steady window and the
// distribution with its outliers, as a table, CSV (one record per step) or JSON.

#include <cstdint>
#include <ostream>
#include <string>

#include "steps/Steps.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// "steps 4-13 of 13, 0.82 s of 8.38 s captured" (or "no steps, 8.38 s captured").
std::string steady_window_text(const StepReport& report);

/// Writes `report` in `format`.
void write_steps(std::ostream& out, const StepReport& report, OutputFormat format);

}  // namespace fuselens::analyzer
