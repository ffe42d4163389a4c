#pragma once
// What prof-run prints while it finalizes a capture (db::Writer's finalize steps, then the
// summary's aggregates and the steps it stores), on stderr. Ten million launches take tens of
// seconds to finalize (docs/BENCHMARKS.md, "Capture size and writer throughput"); without a word
// the run looks hung.
//   - On a terminal: one line "[fuselens] finalizing the capture: STEP (N/M)" rewritten in place
//     at every step, ended by done().
//   - Otherwise (a log file, a pipe, the tests): a line per step only once `quiet` has passed
//     since the finalization began or since the last line printed, so that a short finalization
//     prints nothing and a long one a line every few seconds at most.
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
  static constexpr std::chrono::milliseconds kQuiet{2000};

  /// Prints to `out` (nullptr: nothing); `terminal`: whether it is one (isatty). `clock` is for
  /// tests.
  FinalizeProgressPrinter(std::FILE* out, bool terminal, std::chrono::milliseconds quiet = kQuiet,
                          Clock clock = {});

  /// The step `what` starts, the `number`th of `steps` (steps <= 0: not counted).
  void step(std::string_view what, int number, int steps);
  /// The finalization ended (or failed): ends the terminal's line.
  void done() { line_.done(); }

 private:
  ProgressLine line_;
};

}  // namespace fuselens::tools
