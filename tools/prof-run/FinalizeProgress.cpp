#include "FinalizeProgress.h"

#include <string>
#include <utility>

namespace fuselens::tools {

namespace {

// On a terminal every step is shown at once (a handful of steps, each worth seeing); elsewhere
// nothing (log_every 0).
ProgressOptions finalize_options(bool terminal) {
  ProgressOptions options;
  options.terminal = terminal;
  options.delay = std::chrono::milliseconds(0);
  options.interval = std::chrono::milliseconds(0);
  options.log_every = std::chrono::milliseconds(0);
  return options;
}

}  // namespace

FinalizeProgressPrinter::FinalizeProgressPrinter(std::FILE* out, bool terminal, Clock clock)
    : line_(out, finalize_options(terminal), std::move(clock)) {}

void FinalizeProgressPrinter::step(std::string_view what, int number, int steps) {
  if (!line_.due(true)) return;
  std::string text = "finalizing the capture: " + std::string(what);
  if (steps > 0) text += " (" + std::to_string(number) + "/" + std::to_string(steps) + ")";
  line_.update(text, true);
}

}  // namespace fuselens::tools
