#pragma once
// Application replay (`prof-run --metrics roofline --replay application`): prof-run runs the
// program once per single-pass counter group (collector/src/RangeProfiler.h); run 0 writes the
// capture, runs 1..N-1 write captures of their own, and merge_replay_run() copies each run's
// counters into the capture, launch by launch.
//
// Alignment, after Nsight Compute's application replay (which requires the same): processes pair
// up in the order of their first profiled launch; within a process, profiled launches (the kernel
// rows RangeProfiler writes) pair up in correlation id order, and each pair must name the same
// kernel (mangled name). The counters of a run are merged only when every launch pairs up; a
// mismatch (a different count, or a different kernel at some launch) merges nothing from that run
// and is written into the capture's metric_session.status of the process, so that the roofline
// says why counters are missing.
//
// The capture's metric_session rows gain the run's metric names; each session's `ranges` becomes
// the launches that have counters of every run.

#include <cstdint>
#include <string>

namespace fuselens::collector {

struct ReplayMergeResult {
  std::int64_t launches = 0;  ///< launches whose counters were merged
  std::string error;          ///< empty, or why nothing of the run was merged (one line)
};

/// Merges the kernel_metric rows of `run_capture` (application replay run `run`, 1-based count
/// of the runs shown in messages) into `capture` and updates its metric_session rows. Throws
/// db::Error when either capture cannot be opened or written; a launch mismatch is returned in
/// ReplayMergeResult::error (and stored in the sessions' status), not thrown.
ReplayMergeResult merge_replay_run(const std::string& capture, const std::string& run_capture, int run);

}  // namespace fuselens::collector
