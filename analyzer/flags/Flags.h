#pragma once
// Flags: expert rules over one capture, in the spirit of Nsight Systems' expert system and of
// Holistic Trace Analysis (HTA). Each rule finds hits (a kernel, copy, call or chain that costs
// time), names where they happened (kernel, device and stream, innermost NVTX range on the
// launching thread, pid and thread, calling context) and what to do about them.
// `prof-analyze flags` prints them; the GUI can call the same functions. docs/rules.md documents
// every rule.
//
// Rules (ids, as used by --fail-on and --rules), default thresholds and their source:
//   launch_short     kernel GPU time < CPU time of its launch call, launch call <= 50 us (HTA
//                    short kernels, runtime_cutoff 50 us); per kernel and launch site (stream,
//                    thread, NVTX range and call path)
//   launch_delay     gpu_start - (call_start + call_duration), clipped at 0, > 100 us (HTA)
//   runtime_outlier  kernel launch calls taking > 50 us on the CPU (HTA runtime outliers)
//   stream_idle      idle per stream and launch site split into host wait, kernel wait (gap
//                    < 30 ns, HTA consecutive_kernel_delay) and other; >= 10 % idle (FuseLens)
//   gpu_gaps         device idle >= 500 ms between its first and last operation (Nsight)
//   gpu_utilization  timeline cut into 30 chunks, chunks under 50 % busy (Nsight)
//   sync_memcpy      synchronous copies, except Host-to-Device <= 64 KiB and copies within one
//                    device (Nsight)
//   async_pageable   asynchronous copies from or to pageable host memory (Nsight)
//   sync_memset      synchronous memsets on pinned or managed memory (Nsight)
//   sync_api         device, stream and event synchronization calls (and sync_event records
//                    without one) inside an NVTX range or between kernels of the thread (Nsight)
//   fusion_chain     >= 2 kernels launched back to back (gaps <= 20 us) on one stream from one
//                    thread in one NVTX range instance, the same sequence repeated >= 2 times
//                    (FuseLens). Each hit states whether one kernel's output feeds the next
//                    (kernel arguments sharing an allocation; unknown without the `args` trace
//                    group) and whether the chain is memory-bound (arithmetic intensity below
//                    the device's ridge point, from counters or annotations; unknown without).
//                    Estimated saving = launches removed x measured gap per launch, plus, when
//                    the output feeds the next and the chain is not compute-bound, the shared
//                    buffers' bytes written and read again (2 x bytes) at the device's DRAM
//                    bandwidth (measured ceiling, else datasheet).
//
// Windows (issue 19): the rules run on a window's rows; start-up is reported once, a finding
// repeated every step is one hit with its per-step cost, hits are ranked across rules and a
// verdict opens the report (FlagsVerdict.h, docs/rules.md "Windows, steps and the verdict").
//
// Units: every *_ns value is nanoseconds (times on CUPTI's clock), bytes are bytes; threshold
// keys carry their unit in their name (_us, _ns, _ms, _bytes, _percent).
// Errors: FlagsError (an unknown rule or threshold key, a malformed KEY=VALUE, a negative or
// out-of-range value); db::Error from loading the capture.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flags/FlagsTrace.h"
#include "flags/FlagsVerdict.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

/// A bad rule name, threshold key or value. The CLI maps it to its usage-error exit status.
class FlagsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A rule as docs/rules.md and `prof-analyze flags --list` describe it.
struct RuleInfo {
  std::string_view id;      ///< e.g. "launch_short"
  std::string_view title;   ///< one line
  std::string_view source;  ///< where the definition and thresholds come from
};

/// Every rule, in the order reports list them.
const std::vector<RuleInfo>& flag_rules();

/// A configurable threshold, "<rule>.<name>_<unit>".
struct ThresholdInfo {
  std::string_view key;  ///< e.g. "launch_short.runtime_cutoff_us"
  double default_value;
  std::string_view meaning;
  std::string_view source;
};

/// Every threshold with its default.
const std::vector<ThresholdInfo>& flag_thresholds();

/// Which rules run and with which thresholds.
class FlagsConfig {
 public:
  FlagsConfig();  ///< every rule, default thresholds

  /// The value of a threshold key. Throws FlagsError for an unknown key.
  double get(std::string_view key) const;
  /// Threshold in nanoseconds for keys ending in _us, _ms or _ns.
  std::int64_t get_ns(std::string_view key) const;
  /// Sets a threshold. Throws FlagsError for an unknown key or a negative / non-finite value.
  void set(std::string_view key, double value);
  /// Parses "KEY=VALUE" (VALUE a decimal number) and sets it.
  void set(std::string_view assignment);
  const std::map<std::string, double, std::less<>>& thresholds() const { return thresholds_; }

  /// Restricts the run to `rules` (ids). Throws FlagsError for an unknown id.
  void select_rules(const std::vector<std::string>& rules);
  bool enabled(std::string_view rule) const;

  /// End of the start-up (FlagsVerdict.h; CUPTI clock, 0: none): the timeline rules ignore idle
  /// time before it. run_flags sets it from the window.
  std::int64_t startup_end_ns() const { return startup_end_ns_; }
  void set_startup_end_ns(std::int64_t t_ns) { startup_end_ns_ = t_ns; }

 private:
  std::int64_t startup_end_ns_ = 0;
  std::map<std::string, double, std::less<>> thresholds_;
  std::vector<std::string> selected_;  // empty: all
};

/// Splits "a,b" and checks each against flag_rules(). Throws FlagsError naming the first
/// unknown id. Empty items are ignored.
std::vector<std::string> parse_rule_list(std::string_view comma_separated);

/// One finding, possibly aggregating several instances (launches, copies, calls, gaps).
struct Hit {
  std::string rule;     ///< rule id
  std::string subject;  ///< kernel name, "a -> b -> c" chain, "[CUDA memcpy ...]", API name;
                        ///< empty when the hit is about a time span (gpu_gaps, utilization)
  std::optional<std::uint32_t> device_id, stream_id;
  std::optional<std::uint32_t> pid, tid;  ///< the launching / calling thread when known
  std::string range;  ///< innermost NVTX range on that thread; empty when none or unknown
  /// Calling context of the launch or call site, "main > run_shape > launch_x [file.cu:120]"
  /// (format_context, FlagsTrace.h; for a chain, the call path its kernels' launches share);
  /// empty when the capture has no calling contexts or the hit is about a time span.
  std::string context;
  std::int64_t count = 0;     ///< instances aggregated into this hit
  std::int64_t time_ns = 0;   ///< time at stake (each rule's documentation says which time)
  std::int64_t first_ns = 0;  ///< start of the first instance (CUPTI clock)
  std::string detail;         ///< what was measured, in words
  std::string advice;         ///< what to do
  /// Rule-specific measurements (summed over instances unless the key says max_/mean_),
  /// in insertion order; keys carry units like the CSV columns (gpu_ns, bytes, percent).
  std::vector<std::pair<std::string, double>> metrics;
  /// Start of each instance (CUPTI clock), for the per-step attribution (FlagsVerdict.h);
  /// emptied once the report is ranked.
  std::vector<std::int64_t> instance_ns;

  /// Adds `value` to metric `key` (appends it when missing).
  void add_metric(const std::string& key, double value);
  /// Sets metric `key` to `value`.
  void set_metric(const std::string& key, double value);
  /// Metric `key`, or 0 when missing.
  double metric(std::string_view key) const;
};

/// The result of one run of the rules.
struct FlagsReport {
  std::string path;            ///< the capture
  std::int64_t origin_ns = 0;  ///< FlagsTrace::origin_ns: hits print times relative to it
  bool cuda_used = false;      ///< false: the workload never initialized CUDA
  std::vector<std::string> rules_run;
  std::map<std::string, double, std::less<>> thresholds;
  /// Ranked across rules by time at stake per step (FlagsVerdict.h), highest first.
  std::vector<Hit> hits;
  FlagsWindow window;    ///< the window the hits describe
  FlagsVerdict verdict;  ///< what opens every output

  std::size_t hit_count(std::string_view rule) const;
  std::int64_t time_at_stake(std::string_view rule) const;
};

/// Runs the enabled rules over a loaded trace (the window's rows) in `window` (the whole trace
/// without steps when omitted), then ranks the hits and sets the verdict (FlagsVerdict.h).
FlagsReport run_flags(const FlagsTrace& trace, const FlagsConfig& config,
                      const FlagsWindow& window = {});
/// Loads the capture (kernel names as `names`) and runs the enabled rules in `window`
/// (flags_window: nullptr is the whole capture, with its steps when it has some); the hits'
/// call sites with the frames `frames` selects (CallingContext.h, FramesMode).
FlagsReport run_flags(const db::Reader& reader, const FlagsConfig& config,
                      NameKind names = NameKind::Short, const Window* window = nullptr,
                      FramesMode frames = FramesMode::Auto);

}  // namespace fuselens::analyzer
