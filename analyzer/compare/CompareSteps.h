#pragma once
// CompareSteps: the steps of two captures as one more compared item, "(steps)", so that the CI
// gate (CompareGate.h) can judge training or inference loops whose ranges have a new name per
// step (ProfilerStep#12) and so never pair by name. Each step of the window is one instance of
// one iteration (analyzer/steps/Steps.h):
//   GPU time of a step = Step::compute_ns, the union of its kernels (launched by its process
//                        inside its window; overlapping kernels count once, unlike a range's sum
//                        of kernel durations);
//   GPU span of a step = Step::span_ns, its window widened to the GPU work launched inside.
// kernels_per_iter and launches_per_iter are means over the steps; gpu_ns and span_ns sums;
// memory, bytes and throughput fields are left 0 (steps report them in `prof-analyze steps`).
//
// Units: ns. Errors: none thrown; sums saturate at INT64_MAX instead of overflowing.

#include <optional>

#include "compare/Compare.h"
#include "steps/Steps.h"

namespace fuselens::analyzer {

/// RangeStats named `name` over the steps of `steps` whose 1-based index lies in [first, last];
/// nullopt when none does.
std::optional<RangeStats> step_range_stats(const StepReport& steps, int first, int last,
                                           const std::string& name);

/// Inserts the entry "(steps)" (op "(steps)", no shape, variants "baseline" / "candidate") that
/// pairs `baseline` and `candidate` before the report's other entries, with its speedups, and
/// judges it with the report's GateOptions when it has them.
void add_steps_entry(CompareReport& report, RangeStats baseline, RangeStats candidate);

}  // namespace fuselens::analyzer
