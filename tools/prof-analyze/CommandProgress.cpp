#include "CommandProgress.h"

#include <cstdio>
#include <utility>

namespace fuselens::cli {

std::string short_count(std::uint64_t n) {
  char text[32];
  if (n >= 1'000'000'000) {
    std::snprintf(text, sizeof text, "%.1fG", static_cast<double>(n) / 1e9);
  } else if (n >= 1'000'000) {
    std::snprintf(text, sizeof text, "%.1fM", static_cast<double>(n) / 1e6);
  } else if (n >= 10'000) {
    std::snprintf(text, sizeof text, "%lluK", static_cast<unsigned long long>(n / 1000));
  } else {
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(n));
  }
  return text;
}

CommandProgress::CommandProgress(std::string label)
    : CommandProgress(std::move(label), stderr, tools::stderr_progress_options()) {}

CommandProgress::CommandProgress(std::string label, std::FILE* out,
                                 const tools::ProgressOptions& options,
                                 tools::ProgressLine::Clock clock)
    : label_(std::move(label)),
      started_(clock ? clock() : std::chrono::steady_clock::now()),
      clock_(clock),
      line_(out, options, std::move(clock)),
      scope_([this](std::uint64_t rows) {
        rows_ = rows;
        show(false);
      }) {}

void CommandProgress::stage(std::string_view stage) {
  stage_ = std::string(stage);
  show(true);
}

void CommandProgress::show(bool force) {
  if (!line_.due(force)) return;  // the common case: nothing formatted
  const auto now = clock_ ? clock_() : std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - started_).count();
  std::string text = label_;
  if (!stage_.empty()) text += ": " + stage_;
  if (rows_ > 0) text += (stage_.empty() ? ": " : ", ") + short_count(rows_) + " rows read";
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, ", %.0f s", seconds);
  text += elapsed;
  line_.update(text, force);
}

}  // namespace fuselens::cli
