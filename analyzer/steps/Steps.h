#pragma once
// Steps: the training or inference steps of a capture and what happens in each (issue 19).
//
// Detection (docs/steps.md): NVTX ranges matched by a glob (outermost matching range per thread,
// each range one step), calls of a step function seen in the launches' calling contexts, or the
// period of the kernel-name sequence in launch order (automatic, with a confidence). Per step: the
// wall time, the GPU work launched inside it (projected by launch, as Nsight Systems projects NVTX
// ranges), Holistic Trace Analysis's temporal and idle breakdowns, launches, copies,
// synchronizations and the top kernel; over the steps: the steady window, the distribution of
// step times and the outlier steps with what differs in them. Times are ns on CUPTI's clock.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuselens/db/Glob.h"
#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

/// How steps are found.
enum class StepMethod { Range, Function, Auto };
/// "range", "function" or "auto".
const char* step_method_name(StepMethod method);

/// What to look for. With nothing set: the default range patterns in order, then the automatic
/// method when no range matches.
struct StepOptions {
  std::optional<std::string> range_glob;  ///< --step-range: glob on the range text, any case
  std::optional<std::string> function;    ///< --step-function: function name (suffix at :: or .)
  bool automatic = false;                 ///< --auto
  std::int64_t consecutive_kernel_delay_ns = 30;  ///< HTA's kernel-wait cutoff
  /// Only the steps of this process: every method looks at its ranges, launches and threads
  /// alone, and the steps are numbered 1.. within it (each rank's steps, analyzer/ranks).
  /// nullopt: the steps of every process, numbered together in time order.
  std::optional<std::int64_t> pid;
  /// Only what is found in bounded memory (prof-run's store above kMaxStoredStepRecords): the
  /// default NVTX patterns' steps, filled streaming. No step when none matches (the
  /// launch-sequence search holds every launch) or when the launches come out of call order
  /// (filling them then holds every launch); StepReport::note says which.
  bool streamed_only = false;
};

/// The patterns tried, in order, when no method is named.
inline const std::vector<std::string>& default_step_patterns() {
  static const std::vector<std::string> patterns{"ProfilerStep#*", "*step*", "*iteration*"};
  return patterns;
}

/// Thrown when the named method finds no step (a pattern or function that never occurs).
class StepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One step and its statistics.
struct Step {
  int index = 0;  ///< 1-based, in time order
  std::int64_t pid = 0, tid = 0;
  std::int64_t start_ns = 0, end_ns = 0;  ///< the CPU-side window [start, end)
  std::string label;                      ///< the range text (range method), else ""
  // GPU work launched by any thread of the step's process inside the window
  std::int64_t gpu_busy_ns = 0;     ///< union of its kernel, copy and memset intervals
  std::int64_t compute_ns = 0;      ///< union of its kernels
  std::int64_t non_compute_ns = 0;  ///< union of its copies and memsets outside kernels
  std::int64_t span_ns = 0;  ///< the window widened to its GPU work: the breakdown's denominator
  std::int64_t idle_ns = 0;  ///< span - compute - non-compute
  std::int64_t host_wait_ns = 0;  ///< stream gaps whose next launch call began after the gap began
  std::int64_t kernel_wait_ns = 0;  ///< stream gaps <= consecutive_kernel_delay
  std::int64_t other_wait_ns = 0;   ///< the other stream gaps
  std::int64_t launches = 0, kernels = 0, copies = 0, memsets = 0, syncs = 0;
  std::int64_t allocations = 0;        ///< device-memory allocations of the process in the window
  std::int64_t peak_memory_bytes = 0;  ///< the process's most device memory allocated in it
  std::string top_kernel;  ///< the kernel name with the most GPU time, "" without kernels
  std::int64_t top_kernel_ns = 0;
  std::map<std::string, std::int64_t> kernel_counts;  ///< the step's kernel multiset

  std::int64_t wall_ns() const { return end_ns - start_ns; }
  /// GPU busy time as a share of the span, in [0, 1].
  double busy_share() const {
    return span_ns > 0 ? static_cast<double>(gpu_busy_ns) / static_cast<double>(span_ns) : 0;
  }
};

/// A step time distribution (ns), over the steady steps.
struct StepDistribution {
  double median_ns = 0, p10_ns = 0, p25_ns = 0, p75_ns = 0, p90_ns = 0, max_ns = 0;
};

/// An outlier step and what differs from the median step.
struct StepOutlier {
  int index = 0;
  std::string reason;   ///< "wall 3.2 ms = 2.1x median"
  std::string differs;  ///< "+2 copies, +1 sync, +3 kernels (relu x3)" or "same work"
};

/// Everything `prof-analyze steps` prints.
struct StepReport {
  StepMethod method = StepMethod::Auto;
  std::string pattern;      ///< the glob or function matched; "" for auto
  double confidence = 1.0;  ///< 1 for markers; the period's match fraction for auto
  int period = 0;           ///< auto: launches per step
  std::string note;         ///< why no steps, or how they were found
  std::vector<Step> steps;
  /// Steps found: steps.size() until a caller lists only some of them (prof-analyze steps
  /// --window), then still the number found.
  int step_count = 0;
  int steady_first = 0;  ///< 1-based index of the first steady step (0: no steps)
  int median_step = 0;   ///< the steady step whose time is nearest the median
  StepDistribution distribution;
  std::vector<StepOutlier> outliers;
  std::int64_t captured_ns = 0;  ///< first to last recorded activity
  std::int64_t steady_ns = 0;    ///< sum of the steady steps' wall times
  /// The search did not run to its end (StepOptions::streamed_only left the launch sequence's
  /// search or the filling with every launch undone; a stored detection of method "none"):
  /// there may be steps that `note` does not name.
  bool skipped = false;
};

/// Finds the steps of `reader`'s capture and their statistics. Throws StepError when a named
/// method finds nothing, db::Error on a corrupt capture. The automatic method on a program
/// without repetition returns no steps and says why in `note`.
StepReport analyze_steps(const db::Reader& reader, const StepOptions& options = {});

/// Glob match (`*`, `?`), ASCII case-insensitive, linear and non-recursive (db/Glob.h).
using db::glob_match_nocase;

/// The automatic method on one sequence of names in launch order: the smallest period p >= 2 with
/// a match fraction (name[i] == name[i+p] over the last three quarters) of at least 0.9, at least
/// two repetitions and a name once per period to anchor on (else the longest exact repetition,
/// docs/steps.md), and the positions where steps start. Empty starts: no repetition.
struct PeriodFit {
  int period = 0;
  double confidence = 0;
  std::vector<std::size_t> starts;
  std::string anchor;
};
PeriodFit find_period(const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& gaps_before);

/// The steady rule on step times (ns, in step order): the 0-based index of the first step from
/// which the median of every 5 consecutive steps stays within +-20 % of the median of all steps
/// but the first, moved on to the first such step whose own time is within that tolerance; at
/// least 1 when there are 3 steps or more (1 when the times never settle).
std::size_t steady_start(const std::vector<std::int64_t>& walls);

}  // namespace fuselens::analyzer

namespace fuselens::analyzer {

/// The most GPU records (kernels, copies, memsets, memory events) for which store_steps runs
/// every default method at the end of a run. Above it only the steps of NVTX ranges are stored
/// (StepOptions::streamed_only: filled streaming, about 130 MB at ten million launches); the
/// function and automatic methods hold every launch in memory (about 100 bytes each), and those
/// captures get them from `prof-analyze steps`. The default window of a capture above this bound
/// is the whole capture (kMaxSteadyDefaultRecords, window/Window.h), whose stored aggregates
/// answer at once where the steady window's rows take a minute (the summary of ten million
/// kernels: 61 s against 0.12 s, docs/BENCHMARKS.md).
inline constexpr std::int64_t kMaxStoredStepRecords = 2'000'000;

/// Finds the steps of the capture open read-write in `reader` with the default method
/// (analyze_steps with no options; above kMaxStoredStepRecords GPU records with streamed_only)
/// and stores them in its step tables (db/StepStore.h), replacing any stored before. When the
/// search is skipped above that bound (StepReport::skipped) it stores no steps but a detection row
/// of method "none" saying why, so that the default window knows the search was skipped. Returns ""
/// when steps were stored, else why not. Throws db::Error when the capture has no step tables
/// (schema < 6) or a query fails.
std::string store_steps(db::Reader& reader);

/// store_steps in two parts, for prof-run to find the steps while it builds the indexes: the
/// search runs now, on `reader` (read-only, unrestricted, timestamps checked where read:
/// TimestampCheck::DeferLargeTables; prof-run's reads a lean capture by id,
/// db::Reader::read_lean_by_id, and throws db::OrderBroken as its cursors do); the function
/// returned stores its result through `target` (open ReadWrite on the same capture, its rows
/// unchanged since) and returns what store_steps returns. Throws as store_steps does.
using PreparedSteps = std::function<std::string(db::Reader& target)>;
PreparedSteps prepare_steps(const db::Reader& reader);

/// The steps stored when the run ended, as analyze_steps with no options returns them (every
/// field but Step::kernel_counts, which is not stored); a skipped search ("none") gives no steps
/// with its note. nullopt when nothing was stored (older captures, or prof-run could not).
/// Throws db::Error for stored rows a run cannot have written.
std::optional<StepReport> stored_step_report(const db::Reader& reader);

}  // namespace fuselens::analyzer
