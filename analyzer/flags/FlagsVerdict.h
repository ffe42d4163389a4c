#pragma once
// FlagsVerdict: the window the flags rules describe, and the verdict they open with (issue 19).
//
// Window context (FlagsWindow): the steps inside the window (Steps.h), the window's time and its
// start-up. Start-up is the time before the window: with the whole capture as window, from the
// capture's first activity to the first detected step (no start-up without steps); otherwise
// from the capture's first activity to the window's first interval. It is reported once, as the
// verdict's start-up line; the timeline rules (stream_idle, gpu_gaps, gpu_utilization) ignore
// idle time before its end, so start-up never shows up as a utilization problem.
//
// Per hit, relative to the window (run_flags adds these metrics):
//   window_percent   time at stake / the window's time (Window::inside_ns; with the whole
//                    capture, first to last activity after start-up) x 100;
//   steps_with       the window's steps holding an instance (an instance belongs to the last
//                    step started at or before it: GPU work that runs after its step's CPU side
//                    still counts for that step);
//   per_step_ns, per_step_count, step_percent  for a hit repeated every step: instances in at
//                    least kEveryStepShare (90 %, FuseLens: one step in ten may miss it, e.g.
//                    the first step before the GPU catches up) of the window's steps and at
//                    least 2 steps: time at stake and count over the steps, and per_step_ns as a
//                    share of the mean step span (Step::span_ns).
// A finding repeated in every step is one hit: hits that differ only in their NVTX range, when
// those ranges are the steps' own ranges ("ProfilerStep#12", "ProfilerStep#13"), are merged into
// one hit under the step pattern (counts, times, bytes and gaps summed, max_* the largest, the
// other metrics and the detail those of the largest; stream_idle's shares recomputed).
// Hits are ranked across rules by time at stake per step (the same order as the time at stake
// in the window, as every hit is divided by the same number of steps); with steps, a device's
// gpu_utilization chunks are one hit, ranked last: it restates the verdict's busy share.
//
// Verdict (FlagsVerdict), over the window's steps (sums of HTA's per-step temporal and idle
// breakdowns, Step in Steps.h) or, without steps, over the window as a whole (the same
// breakdowns computed on the window's GPU operations after start-up):
//   busy share >= kBusyPercent (50 %, the busy share under which Nsight Systems' GPU time
//   utilization rule reports a chunk):
//     copy-bound  when copies and memsets (HTA's non-compute) take more GPU time than kernels;
//     GPU-bound   otherwise (the causes name the kernels with the most GPU time);
//   busy share < kBusyPercent (the GPU idles most of the time):
//     sync-bound  when synchronization calls (device, stream, event, context synchronize)
//                 last at least half the idle time;
//     host-bound  else when host wait is the largest part of HTA's idle breakdown (the next
//                 launch call began after the stream went idle: the CPU did not enqueue work in
//                 time);
//     launch-bound when kernel wait (gaps under consecutive_kernel_delay, HTA) is the largest;
//     latency-bound when "other" idle is the largest (work was queued in time, yet the stream
//                 idled: dependencies between streams or the GPU-side launch latency).
//   no GPU work  when the window holds no GPU operation.
// Causes: the three highest-ranked hits with their per-step (or window) cost; for GPU- and
// copy-bound windows the GPU operations with the most GPU time first.
//
// Units: ns on CUPTI's clock, percentages 0-100. Errors: db::Error from reading the capture;
// StepError never escapes (a capture without steps gets the whole-window verdict).

#include <cstdint>
#include <string>
#include <vector>

#include "steps/Steps.h"

namespace fuselens::analyzer {

struct Window;
struct FlagsTrace;
struct FlagsReport;

/// Share of the window's steps a hit must occur in to count as repeated every step.
inline constexpr double kEveryStepShare = 0.9;
/// Busy share (%) at or above which a window is GPU- or copy-bound (Nsight Systems' low GPU
/// time utilization threshold).
inline constexpr double kBusyPercent = 50;

/// The window a flags run describes.
struct FlagsWindow {
  std::string label = "all";   ///< Window::label, or "all"
  std::string description;     ///< Window::description, or "" for the whole capture
  bool whole = true;           ///< the analysed rows are the whole capture
  std::int64_t inside_ns = 0;  ///< the window's time; 0: computed from the trace
  std::vector<Step> steps;     ///< the steps inside the window, in time order
  /// The NVTX pattern the steps were found by ("ProfilerStep#*"; "" for the other methods):
  /// hits in the ranges of different steps are one finding, reported under the pattern.
  std::string step_pattern;
  std::int64_t startup_ns = 0;      ///< length of the start-up (0: none)
  std::int64_t startup_end_ns = 0;  ///< where start-up ends (CUPTI clock); 0: no start-up
  std::string startup_before;       ///< "step 6", "the first step" or "the window"
};

/// The window context of `window` (the lead's window API; nullptr: the whole capture). For a
/// whole window without steps in it, the steps are those stored in the capture
/// (stored_step_report), else found on `reader` (unrestricted: a whole window restricts nothing)
/// with the default step options. Throws db::Error for stored step rows a run cannot have
/// written.
FlagsWindow flags_window(const db::Reader& reader, const Window* window);
/// The whole capture as window, with `steps` (found on it) as its steps; start-up ends at the
/// first step (its length is set when the report is made, from the trace's first activity).
FlagsWindow whole_capture_window(const StepReport& steps);

/// The verdict that opens every flags output.
struct FlagsVerdict {
  std::string window;    ///< FlagsWindow::label
  std::string kind;      ///< "host-bound", "launch-bound", "latency-bound", "sync-bound",
                         ///< "GPU-bound", "copy-bound" or "no GPU work"
  std::string headline;  ///< "host-bound: GPU busy 15.2 % of each step (mean step 2.41 ms);
                         ///< idle 84.8 %: host wait 80 %, kernel wait 1 %, other 19 %"
  std::vector<std::string> causes;  ///< "launch_short: 61 per step, 1.2 ms per step (48 % of
                                    ///< the step), ... called from ..."
  int steps = 0;                    ///< steps in the window (0: the window as a whole)
  std::int64_t span_ns = 0;         ///< the mean step span, or the window's analysed span
  double busy_percent = 0, compute_percent = 0, non_compute_percent = 0, idle_percent = 0;
  /// HTA's idle breakdown, as shares (%) of the stream idle time.
  double host_wait_percent = 0, kernel_wait_percent = 0, other_wait_percent = 0;
  double sync_percent = 0;  ///< synchronization call time as a share (%) of the span
  std::int64_t startup_ns = 0;
  std::string startup;  ///< "start-up: 7.5 s before the first step, reported once here ..."
};

/// Adds the window metrics to `report`'s hits, merges a device's gpu_utilization chunks into one
/// hit when the window has steps, ranks the hits and sets its verdict (definitions above).
void apply_window_to_flags(const FlagsTrace& trace, const FlagsWindow& window,
                           std::int64_t kernel_wait_ns, FlagsReport& report);

}  // namespace fuselens::analyzer
