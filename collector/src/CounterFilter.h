#pragma once
// CounterFilter: the range profiler's per-launch choice of which kernel launches get counters
// (LaunchFilter.h: prof-run --kernel-name, --kernel-name-base, --launch-skip, --launch-count,
// --nvtx-include, --nvtx-exclude) and its progress lines, on CUPTI's callbacks.
//
// Launch path: decide() looks the launch's CUfunction up in a hash map (the kernel-name decision
// and the printed name are computed once per function, at its first launch: the only
// allocation), asks the LaunchFilter for the NVTX state of the launching thread (a thread_local,
// no lock) and counts the launch for --launch-skip/--launch-count. The CUfunction comes from the
// launch call's parameters (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel, their
// _ptsz forms, cuLaunch, cuLaunchGrid, cuLaunchGridAsync); for other launch calls
// (cuLaunchCooperativeKernelMultiDevice) the name is matched at every launch. NVTX calls reach
// on_nvtx() only when NVTX expressions were given (start() enables CUPTI's NVTX callback domain);
// NVTX calls made before the collector started (the process's first CUDA call) are not seen.
//
// Progress (FUSELENS_PROGRESS; prof-run sets nothing, so it follows stderr): when stderr is a
// terminal, or FUSELENS_PROGRESS=1 (or always), every profiled launch prints one line to stderr
// after its counters were read, after Nsight Compute's "==PROF== Profiling ..." lines:
//   ==FuseLens== Profiling "gemm_kernel" - 3: 5 passes
//   ==FuseLens== Profiling "gemm_kernel" - 3: counter group 2 of 5 (application replay)
// N (here 3) counts the profiled launches of the process from 0; the name is the kernel's bare
// function name, control characters replaced by '?', cut at 120 bytes. Not a terminal (and
// FUSELENS_PROGRESS unset or "auto"), or FUSELENS_PROGRESS=0 (or never): nothing is printed and the
// launch path makes no I/O.
//
// Thread safety: decide() and print_progress() are called with the range profiler's lock held
// (launches are serialized); on_nvtx() runs on any thread without it.

#include <cupti.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "fuselens/collector/Config.h"
#include "fuselens/collector/LaunchFilter.h"

namespace fuselens::collector {

class CounterFilter {
 public:
  /// Compiles config.filter (validated by CollectorConfig::validate already; a ConfigError
  /// escapes) and settles the progress setting (config.progress, else isatty(stderr)).
  explicit CounterFilter(const CollectorConfig& config);
  ~CounterFilter();

  /// Enables the NVTX callbacks on `subscriber` when NVTX expressions were given. False (and a
  /// log line) when they cannot be observed: then no launch passes an --nvtx-include.
  bool start(CUpti_SubscriberHandle subscriber) noexcept;
  /// True when filters were given: each launch is decided at its entry.
  bool gated() const noexcept { return gated_; }
  /// True once --launch-count launches were profiled: no later launch will be.
  bool exhausted() const noexcept { return filter_ && filter_->exhausted(); }

  /// A launch (driver callback `id`): whether it is to be profiled. Counts it. Remembers its name
  /// for print_progress().
  bool decide(CUpti_CallbackId id, const CUpti_CallbackData& cb) noexcept;
  /// The progress line of the launch decide() accepted last (nothing unless progress is on).
  /// `passes`: kernel replay's passes per launch; `group`/`groups`: application replay's run.
  void print_progress(std::int64_t passes, bool application, std::uint32_t group) noexcept;
  /// An NVTX callback (push, pop, start, end, domain creation).
  void on_nvtx(CUpti_CallbackId id, const void* data) noexcept;
  /// One log line at the end of the process: launches seen, matching, profiled (filters only).
  void log_summary() const noexcept;

 private:
  struct Function {
    bool name_ok = true;
    std::string shown;  // for progress: printable, cut
  };
  const Function* function_of(CUpti_CallbackId id, const CUpti_CallbackData& cb);

  std::unique_ptr<LaunchFilter> filter_;  // null without filters
  bool gated_ = false;
  bool progress_ = false;
  std::unordered_map<const void*, Function> functions_;  // by CUfunction
  Function uncached_;                                    // launches without a CUfunction
  const Function* last_ = nullptr;
  std::uint64_t launches_ = 0, profiled_ = 0;
};

}  // namespace fuselens::collector
