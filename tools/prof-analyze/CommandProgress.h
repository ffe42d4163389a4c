#pragma once
// CommandProgress: what prof-analyze prints while a subcommand works on a large capture (issue
// 23, "Terminal manners"; docs/terminal.md, "Progress"): on a terminal, after one second, the
// line "[fuselens] LABEL: STAGE, N rows read, T s" rewritten at most ten times a second and
// erased when the work ends; off a terminal (a pipe, a file, CI) nothing. Rows are those every
// db::Cursor of this thread reads (db::RowProgressScope, reported every 65,536 rows), so the
// analyses need no change and their results none either. Built on tools/common/ProgressLine.h.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "ProgressLine.h"
#include "fuselens/db/Cursor.h"

namespace fuselens::cli {

class CommandProgress {
 public:
  /// Starts the progress of `label` (e.g. "export chrome-trace"), on standard error with
  /// tools::stderr_progress_options(); rows are counted from now until destruction.
  explicit CommandProgress(std::string label);
  /// Same, with explicit options and output (tests).
  CommandProgress(std::string label, std::FILE* out, const tools::ProgressOptions& options,
                  tools::ProgressLine::Clock clock = {});
  /// Erases the line.
  ~CommandProgress() = default;
  CommandProgress(const CommandProgress&) = delete;
  CommandProgress& operator=(const CommandProgress&) = delete;

  /// The work moved on to `stage` (e.g. "writing out.html"); shown at once when due.
  void stage(std::string_view stage);
  /// Erases the line before the caller prints to standard error; later updates reopen it.
  void done() { line_.done(); }

 private:
  void show(bool force);

  std::string label_, stage_;
  std::chrono::steady_clock::time_point started_;
  tools::ProgressLine::Clock clock_;
  tools::ProgressLine line_;
  std::uint64_t rows_ = 0;
  db::RowProgressScope scope_;  // last: its hook uses the members above
};

/// "1.2M", "350K", "999": a row count, short.
std::string short_count(std::uint64_t n);

}  // namespace fuselens::cli
