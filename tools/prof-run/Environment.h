#pragma once
// The FUSELENS_* variables of the user's environment that reach the collector unchanged (issue
// 22): prof-run sets most of them from its own options, but the others (FUSELENS_CONTEXT_METHOD,
// FUSELENS_PYTHON_FRAMES, FUSELENS_CONTEXT_STATS, FUSELENS_EXIT_SHIM, FUSELENS_API_SELECT,
// FUSELENS_CONTROL_API, FUSELENS_PROGRESS,
// FUSELENS_TORCH_MODULES without --torch-modules, the counter variables without --metrics) were
// passed on unchecked, and a bad value made the collector refuse to start inside the workload, so
// that the capture read "never initialized CUDA". prof-run checks them before it launches anything.

#include <string>

#include "fuselens/collector/Config.h"

namespace fuselens::collector {

/// Checks the environment the workload would get: prof-run's values for the variables it sets
/// (from `config`, `metrics_from_options`: whether prof-run sets the counter variables) over
/// the user's for the rest, read by the collector's own parser (CollectorConfig::
/// from_environment, with its validation), plus FUSELENS_TORCH_MODULES (0, 1, on, off, true,
/// false, yes, no) when `torch_modules_from_options` is false. Returns "" when the collector
/// would accept them, else one line naming the variables the user set and why they are refused.
/// Leaves the process environment as it found it.
std::string check_user_environment(const CollectorConfig& config, bool metrics_from_options,
                                   bool torch_modules_from_options);

}  // namespace fuselens::collector
