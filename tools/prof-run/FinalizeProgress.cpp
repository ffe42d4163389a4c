#include "FinalizeProgress.h"

#include <utility>

namespace fuselens::tools {

FinalizeProgressPrinter::FinalizeProgressPrinter(std::FILE* out, bool terminal,
                                                 std::chrono::milliseconds quiet, Clock clock)
    : out_(out), terminal_(terminal), quiet_(quiet), clock_(std::move(clock)), last_(now()) {}

std::chrono::steady_clock::time_point FinalizeProgressPrinter::now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

void FinalizeProgressPrinter::step(std::string_view what, int number, int steps) {
  if (out_ == nullptr) return;
  const auto t = now();
  if (!terminal_ && t - last_ < quiet_) return;
  last_ = t;
  // "\r" and "erase to the end of the line" (ECMA-48 EL) on a terminal; a whole line elsewhere.
  std::fprintf(out_, "%s[fuselens] finalizing the capture: %.*s", terminal_ ? "\r\033[K" : "",
               static_cast<int>(what.size()), what.data());
  if (steps > 0) std::fprintf(out_, " (%d/%d)", number, steps);
  if (terminal_) {
    line_open_ = true;
  } else {
    std::fputc('\n', out_);
  }
  std::fflush(out_);
}

void FinalizeProgressPrinter::done() {
  if (out_ == nullptr || !line_open_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  line_open_ = false;
}

}  // namespace fuselens::tools
