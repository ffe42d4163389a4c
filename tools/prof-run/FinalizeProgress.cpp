#include "FinalizeProgress.h"

#include <fmt/format.h>

#include <algorithm>
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
    : line_(out, finalize_options(terminal), clock),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

void FinalizeProgressPrinter::close_step() {
  if (current_.empty()) return;
  const double s = std::chrono::duration<double>(clock_() - started_).count();
  auto it = std::find_if(kinds_.begin(), kinds_.end(),
                         [&](const Kind& kind) { return kind.what == current_; });
  if (it == kinds_.end()) {
    kinds_.push_back({current_, s, {}});
  } else {
    it->seconds += s;
  }
  current_.clear();
}

void FinalizeProgressPrinter::part(std::string_view what, double seconds) {
  if (current_.empty()) return;
  auto it = std::find_if(kinds_.begin(), kinds_.end(),
                         [&](const Kind& kind) { return kind.what == current_; });
  if (it == kinds_.end()) it = kinds_.insert(kinds_.end(), {current_, 0, {}});
  it->parts += fmt::format("{}{} {:.1f} s", it->parts.empty() ? "" : ", ", what, seconds);
}

void FinalizeProgressPrinter::done() {
  close_step();
  line_.done();
}

std::string FinalizeProgressPrinter::breakdown(double min_seconds) const {
  std::string out;
  for (const Kind& kind : kinds_) {
    if (kind.seconds < min_seconds && kind.parts.empty()) continue;
    out += fmt::format("{}{} {:.1f} s", out.empty() ? "" : ", ", kind.what, kind.seconds);
    if (!kind.parts.empty()) out += " [at once: " + kind.parts + "]";
  }
  return out;
}

void FinalizeProgressPrinter::step(std::string_view what, int number, int steps) {
  close_step();
  current_ = what.starts_with("index ")      ? std::string("indexes")
             : what.starts_with("storing ")  ? std::string("storing results")
             : what.starts_with("results: ") ? std::string("results")
                                             : std::string(what);
  started_ = clock_();
  if (!line_.due(true)) return;
  std::string text = "finalizing the capture: " + std::string(what);
  if (steps > 0) text += " (" + std::to_string(number) + "/" + std::to_string(steps) + ")";
  line_.update(text, true);
}

}  // namespace fuselens::tools
