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
// exports and analyses use too.

#include <chrono>
#include <cstdio>
#include <functional>
#include <string_view>

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
  /// The finalization ended (or failed): ends the terminal's line.
  void done() { line_.done(); }

 private:
  ProgressLine line_;
};

}  // namespace fuselens::tools
