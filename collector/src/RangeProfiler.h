#pragma once
// RangeProfiler: hardware counters per kernel launch (`prof-run --metrics roofline`) with the
// CUPTI Range Profiler (cupti_range_profiler.h, CUDA 12.6+): auto range (one range per kernel
// launch) and one of two replay modes, after Nsight Compute's --replay-mode:
//
// - kernel (the default): each launch runs once per pass within one run of the program. With
//   cache control "all" (the default, as Nsight Compute's) the collector replays it itself
//   (LaunchReplay.h: CUPTI_UserReplay; at the launch's entry the context's memory is saved with
//   CUPTI's checkpoint API, and before each pass restored and the caches flushed (L2Flush.h); the
//   kernel is launched again with the program's parameters; the program's own launch is the last
//   pass). Launches it cannot make again, or whose memory cannot be saved, get CUPTI's replay
//   (logged, counted). With "none": CUPTI_KernelReplay, which runs the passes inside the launch
//   call, saving and restoring memory; the caches during a pass are what the save, the restore
//   and the earlier passes left (CUPTI has no cache control). docs/counters.md has the table.
// - application (`prof-run --replay application`): prof-run runs the program once per group of
//   metrics that fits in one pass (single_pass_groups: first fit, the duration and DRAM metrics
//   in group 0); run k (kEnvMetricPass) collects group k from each launch as the program makes it
//   (CUPTI_UserReplay with one pass: nothing saved, restored or replayed), and prof-run merges the
//   runs' counters by launch order (tools/prof-run/ReplayMerge.h). With cache control "all"
//   (L2Flush.h) the L2 is written back and evicted before every profiled launch, as Nsight
//   Compute's default does; with "none" a launch sees the caches as the program left them. The
//   program must launch the same kernels in the same order in every run.
//
// How launches are joined to ranges: the collector's subscriber gets the driver API callbacks of
// the kernel launch calls (cuLaunch*, which the runtime's launches go through; their correlation
// id is the one the kernel's activity record carries). At the launch's API entry the context's
// range profiler is enabled on first use and started; at its exit the profiler is stopped, the
// counter data decoded, the last range evaluated and stored as the counters of that correlation
// id (table kernel_metric), and the profiler restarted. Ranges of work that was not launched by
// such a call (a graph launch, say) decode as extra ranges in the same batch; they are counted in
// metric_session.unattributed_ranges and dropped, never attributed to the wrong launch.
//
// Which launches (prof-run --kernel-name, --kernel-name-base, --launch-skip, --launch-count,
// --nvtx-include, --nvtx-exclude; LaunchFilter.h has the semantics, after Nsight Compute's):
// without filters every launch is profiled. With filters or cache control "all", kernel replay
// works like application replay does: the profiler is stopped between launches, and at a launch's
// entry (under the launch gate, so one launch per process at a time) CounterFilter decides whether
// it is chosen; only a chosen launch starts the profiler, is replayed and gets counters and a
// kernel row; the others run once, unreplayed, as without FuseLens's counters (their launch calls
// are in api_call; with the `cuda` group off under counters they have no kernel row). Once
// --launch-count launches were profiled, later launches skip the gate. The choice costs a hash
// lookup of the CUfunction per launch (CounterFilter.h).
//
// Progress: one line per profiled launch on stderr when it is a terminal or FUSELENS_PROGRESS=1 (or
// always) (CounterFilter.h has the format); nothing otherwise.
//
// Cost: every launch becomes synchronous and runs `passes` times (5 for the roofline set on an
// H100) plus the decode, and under cache control "all" a memory save, passes-1 restores and
// `passes` cache flushes; docs/BENCHMARKS.md has the measured slowdown.
//
// Kernel rows: on an H100 with CUPTI 13.0 (driver 580), kernel activity records under kernel
// replay carry zero timestamps, and with the `cuda` activity kinds enabled (kernel, memcpy,
// memset, synchronization) the range profiler stopped producing ranges after the first copy and
// the process aborted at exit ("free(): invalid pointer"); without them every launch was
// profiled and the process exited cleanly (docs/BENCHMARKS.md). So while counters are collected
// the collector leaves the `cuda` group off (no memcpy, memset or sync rows) and this class
// writes the kernel rows of the launches it profiles: name (the callback's symbol), correlation id,
// device, context; end = CUPTI timestamp when the launch call returns (the replayed kernel has
// finished), start = end - gpu__time_duration.sum (the duration of the profiled pass). Stream, grid
// and block are 0.
//
// Errors never reach the host program: an unsupported metric, missing privileges
// (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), an unsupported GPU or a failing CUPTI call is logged
// once with "[fuselens]", profiling stops on that context, and metric_session.status says why.
// Launches from several threads of one context are serialized by one lock; CUPTI numbers auto
// ranges in launch order, which the lock keeps. Under application replay a launch gate is held
// from a launch's entry to its exit (its pass is open in between), so one launch per process is
// profiled at a time; the L2 flush's own driver calls (context synchronize, the flush kernel's
// launch) are made inside an InternalCalls (InternalCalls.h), and the collector ignores their
// callbacks.
//
// A CallbackHandler (CallbackHandler.h): the session starts it when counters are asked for and
// registers it, so its callback walk calls on_callback() on every driver and resource callback;
// finish() at the end stores what is pending. It writes its rows through connections of its own,
// so write_final() has nothing to add.
//
// Application replay's kernel rows: end = CUPTI timestamp after the pass was decoded (which waits
// for the kernel), start = end - gpu__time_duration.sum; the same caveats as above.

#include <cupti.h>

#include <cstdint>
#include <memory>
#include <string>

#include "CallbackHandler.h"
#include "fuselens/collector/Config.h"

namespace fuselens::collector {

struct RangeProfilerState;  // RangeProfilerSession.h

class RangeProfiler final : public CallbackHandler {
 public:
  RangeProfiler();
  ~RangeProfiler() override;

  /// Validates config.metrics ("roofline"), takes the replay mode, run index and cache control
  /// from `config`, remembers the capture and enables the driver launch callbacks on
  /// `subscriber`. Returns false (and logs why) when nothing will be collected. One
  /// RangeProfiler per process (the CUPTI profiler is initialized once).
  bool start(const CollectorConfig& config, const std::string& capture,
             CUpti_SubscriberHandle subscriber, std::uint32_t pid) noexcept;
  /// Kernel launches, stream captures and (with NVTX filters) NVTX calls are handled, the rest
  /// ignored (so are calls made inside an InternalCalls).
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                   const void* data) noexcept override;
  /// Stores what is pending and each context's session row, disables the profilers. Idempotent.
  void finish() noexcept override;

 private:
  std::unique_ptr<RangeProfilerState> state_;  // set by a successful start()
};

}  // namespace fuselens::collector
