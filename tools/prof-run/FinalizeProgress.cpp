#include "FinalizeProgress.h"

#include <string>
#include <utility>

namespace fuselens::tools {

namespace {

// On a terminal every step is shown at once (a handful of steps, each worth seeing); elsewhere a
// line per `quiet` period.
ProgressOptions finalize_options(bool terminal, std::chrono::milliseconds quiet) {
  ProgressOptions options;
  options.terminal = terminal;
  options.delay = std::chrono::milliseconds(0);
  options.interval = std::chrono::milliseconds(0);
  options.log_every = quiet;
  return options;
}

}  // namespace

FinalizeProgressPrinter::FinalizeProgressPrinter(std::FILE* out, bool terminal,
                                                 std::chrono::milliseconds quiet, Clock clock)
    : line_(out, finalize_options(terminal, quiet), std::move(clock)) {}

void FinalizeProgressPrinter::step(std::string_view what, int number, int steps) {
  if (!line_.due(true)) return;
  std::string text = "finalizing the capture: " + std::string(what);
  if (steps > 0) text += " (" + std::to_string(number) + "/" + std::to_string(steps) + ")";
  line_.update(text, true);
}

}  // namespace fuselens::tools
