#pragma once
// What prof-run prints while it finalizes a capture (db::Writer's finalize steps, then the
// summary's aggregates and the steps it stores), on stderr. Ten million launches take tens of
// seconds to finalize (docs/BENCHMARKS.md, "Capture size and writer throughput"); without a word
// the run looks hung.
//   - On a terminal: one line "[fuselens] finalizing the capture: STEP (N/M)" rewritten in place
//     at every step, ended by done().
//   - Otherwise (a log file, a pipe, the tests): nothing (issue 23: progress "nothing when not a
//     TTY"); FUSELENS_PROGRESS=always gives the terminal's form anyway (ProgressLine.h). The
//     "[fuselens] finalized in X s" line after a long finalization is prof-run's report, not
//     progress, and is printed either way.
// Both through the tools' shared progress line (tools/common/ProgressLine.h), which prof-analyze's
// exports and analyses use too. The printer also times the steps, for the report line after a
// long finalization ("[fuselens] finalized in 73.6 s (indexes 47.1 s, summary aggregates 10.2 s,
// ...)"): where the end of a run goes is the first question when it takes a minute.

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ProgressLine.h"

namespace fuselens::tools {

class FinalizeProgressPrinter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// Prints to `out` (nullptr: nothing) when `terminal` (whether it is one: isatty, or
  /// FUSELENS_PROGRESS=always), nothing otherwise. `clock` is for tests.
  FinalizeProgressPrinter(std::FILE* out, bool terminal, Clock clock = {});

  /// The step `what` starts, the `number`th of `steps` (steps <= 0: not counted).
  void step(std::string_view what, int number, int steps);
  /// The step under way ended (the time until the next step() is not counted) and the
  /// terminal's line with it; a second done() does nothing.
  void done();

  /// Notes that `what`, a part of the step under way run beside its other parts, took `seconds`
  /// (shown with the step's own time by breakdown()); nothing without a step under way.
  void part(std::string_view what, double seconds);

  /// The time of each kind of step, in the order first started, as "what 1.2 s, ..." (one
  /// decimal), a step's parts after it as "[at once: a 1.0 s, b 1.1 s]"; "index NAME" steps count
  /// as one kind, "indexes", "storing NAME" steps as "storing results", "results: ..." as
  /// "results"; kinds under `min_seconds` are left out unless they have parts (results computed
  /// beside the indexes take little time of their own: what they show is their parts). Empty
  /// when none is left.
  std::string breakdown(double min_seconds = 0.1) const;

 private:
  void close_step();

  ProgressLine line_;
  Clock clock_;
  std::string current_;  ///< the kind of the step under way; empty when none
  std::chrono::steady_clock::time_point started_{};
  struct Kind {
    std::string what;
    double seconds = 0;
    std::string parts;  ///< "a 1.0 s, b 1.1 s"
  };
  std::vector<Kind> kinds_;  ///< in the order first started
};

}  // namespace fuselens::tools
