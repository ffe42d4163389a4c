#pragma once
// Window: the part of a capture an analysis describes (issue 19, docs/windows.md).
//
// `--window all | steady | steps:A-B | range:GLOB | time:T0-T1` on every prof-analyze command and
// in the GUI. A window is a set of disjoint CPU-time intervals [start, end) on CUPTI's clock (ns):
//   all          the whole capture;
//   steady       the steps found (Steps.h, default method) from the first steady step to the last
//                (steady_start's rule: skip the first steps until the rolling median of 5 step
//                times settles within +-20 % of the median step); the whole capture when the
//                capture has no steps;
//   steps:A-B    steps A to B (1-based, inclusive; "steps:A" one step, "steps:A-" A to the last);
//   range:GLOB   every instance of the NVTX ranges matching GLOB (outermost per thread, any case);
//   time:T0-T1   seconds from the capture's first activity (suffix s, ms, us or ns allowed).
// The default window (no --window given) is `steady`, except on a capture of more than
// kMaxSteadyDefaultRecords GPU records, where it is the whole capture: there prof-run stores the
// whole capture's aggregates and results (analyzer/store), which answer at once, where the
// steady window's rows take a minute to read (docs/windows.md, "The default window"). An
// explicit `--window steady` always selects the steady steps.
// An activity belongs to the window when it starts inside one of the intervals; GPU work
// (kernels, copies, memsets) is projected by launch, as Nsight Systems projects NVTX ranges: it
// belongs where its launch call started (its own start when it has no launch call), so a step's
// kernels that run after the step's CPU side ended still count for that step.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"
#include "sampling/Sampling.h"
#include "steps/Steps.h"

namespace fuselens::analyzer {

/// Thrown by parse_window for a malformed window (a command-line error) and by resolve_window
/// for a window that selects nothing (a range that never occurs, steps the capture lacks, a time
/// span outside the capture). The message is one line and names the window as given.
class WindowError : public std::runtime_error {
 public:
  enum class Kind { Syntax, Empty };
  WindowError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

enum class WindowKind { All, Steady, Steps, Range, Time };

/// A window as the user wrote it.
struct WindowSpec {
  WindowKind kind = WindowKind::Steady;
  int first_step = 0;                 ///< Steps: 1-based
  std::optional<int> last_step;       ///< Steps: inclusive; nullopt: to the last step
  std::string range_glob;             ///< Range
  std::int64_t t0_ns = 0, t1_ns = 0;  ///< Time: offsets from the capture's first activity
  std::string text;                   ///< as given ("steady" for the default)
  /// No window was given: the default `steady`, which resolve_window reads as `all` on a capture
  /// of more than kMaxSteadyDefaultRecords GPU records when the steps' method is the default.
  bool by_default = false;
};

/// The most GPU records (kernels, copies, memsets, memory events; db::Reader::gpu_record_bound)
/// of a capture whose default window is `steady`; above, the default window is the whole capture.
/// The same bound as prof-run's stored results (kMaxStoredStepRecords, kMaxStoredAnalysisRecords):
/// the window an analysis shows by default is the one prof-run stored its results for.
inline constexpr std::int64_t kMaxSteadyDefaultRecords = kMaxStoredStepRecords;

/// The window of a command run without --window: parse_window(`text`) marked by_default.
WindowSpec default_window(const std::string& text = "steady");

/// Parses a --window value. Throws WindowError(Syntax) naming what is wrong.
WindowSpec parse_window(const std::string& text);

/// One interval of a window: [start_ns, end_ns) on CUPTI's clock.
using TimeInterval = db::TimeSpan;

/// A window resolved against one capture.
struct Window {
  WindowSpec spec;
  bool whole = true;  ///< no restriction: `all`, or `steady` on a capture without steps
  std::vector<TimeInterval> intervals;  ///< sorted, disjoint; empty when whole
  /// The steps found in the capture (every step window and `steady`; nullopt for the others).
  std::optional<StepReport> steps;
  int first_step = 0, last_step = 0;  ///< the steps inside the window, 1-based (0: none)
  std::int64_t capture_start_ns = 0;  ///< the capture's first recorded activity
  std::int64_t captured_ns = 0;       ///< its first to its last recorded activity
  std::int64_t inside_ns = 0;         ///< sum of the intervals' lengths (captured_ns when whole)
  std::int64_t startup_ns = 0;        ///< capture start to the window's first interval
  std::string label;        ///< short, for CSV cells and status bars: "steps 6-65 of 65 (steady)"
  std::string description;  ///< "steps 6-65 of 65 (steady), 0.82 s of 8.38 s captured;
                            ///< start-up 7.5 s excluded"
  /// What a sampled capture traced (prof-run --sample; sampling/Sampling.h), read from the whole
  /// capture whatever the window; nullopt when it was not sampled.
  std::optional<SamplingSummary> sampling;

  /// True when time `t_ns` lies in the window.
  bool contains(std::int64_t t_ns) const;
};

/// The capture's first start and last end of its kernels, copies, memsets and API calls (ns),
/// {0, 0} without any: the extent stored when the capture was finalized while it is fresh
/// (db::stored_capture_extent), else the first start and last end read from the four tables
/// (about 1.6 s of CPU on ten million kernels). `reader` unrestricted. Throws db::Error.
std::pair<std::int64_t, std::int64_t> capture_extent(const db::Reader& reader);

/// Resolves `spec` on `reader`'s capture (read unrestricted): finds the steps with
/// `step_options` where the window needs them. Throws WindowError(Empty) when the window selects
/// nothing, StepError when a named step method finds nothing, db::Error on a corrupt capture.
Window resolve_window(const db::Reader& reader, const WindowSpec& spec,
                      const StepOptions& step_options = {});

/// Restricts every later read through `reader` to `window` (db::Reader::restrict_to); nothing
/// for a whole window. Throws WindowError(Empty) when no GPU work or API call lies inside it.
void apply_window(db::Reader& reader, const Window& window);

}  // namespace fuselens::analyzer
