#pragma once
// ProgressLine: the progress of long work of the command-line tools on standard error (issue 23,
// "Terminal manners"): prof-run's finalization of a capture, prof-analyze's exports and
// analyses of large captures. docs/terminal.md describes what users see.
//   - On a terminal: one line "[fuselens] TEXT" rewritten in place ("\r" and ECMA-48 EL,
//     "erase to the end of the line"), cut to the terminal's width so that it never wraps; not
//     before `delay` has passed since the work began (short work prints nothing) and at most once
//     per `interval` (10 updates a second by default). done() erases the line.
//   - Elsewhere (a log file, a pipe, the tests): nothing, unless `log_every` > 0: then a whole
//     line per update once `log_every` has passed since the work began or since the last line
//     printed. Every tool leaves it 0 (issue 23: progress prints "nothing when not a TTY").
// TEXT is written as db::printable writes it: a path or a capture string cannot drive the
// terminal.

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace fuselens::tools {

struct ProgressOptions {
  bool enabled = true;                      ///< false: nothing at all (FUSELENS_PROGRESS=never)
  bool terminal = false;                    ///< whether `out` is a terminal (isatty)
  std::chrono::milliseconds delay{1000};    ///< terminal: nothing before the work ran this long
  std::chrono::milliseconds interval{100};  ///< terminal: at most one update per interval
  std::chrono::milliseconds log_every{0};   ///< elsewhere: a line per period; 0: nothing
  int columns = 0;  ///< terminal width in columns; 0: asked of `out` (TIOCGWINSZ), else 80
};

class ProgressLine {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// Prints to `out` (nullptr: nothing); the work begins now. `clock` is for tests.
  ProgressLine(std::FILE* out, const ProgressOptions& options, Clock clock = {});
  /// Calls done().
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// The work is at `text`. `force`: on a terminal, print even within `interval` of the last
  /// update (a new step that should not be skipped); never before `delay`.
  void update(std::string_view text, bool force = false);
  /// Whether update() would print now (false within `delay` or `interval`, or off a terminal
  /// within `log_every`): lets a caller skip formatting a text that would not be shown.
  bool due(bool force = false) const;
  /// The work ended (or failed): erases the terminal's line. Anything the caller prints to
  /// `out` next starts on a clean line. Idempotent.
  void done();
  /// Erases the line of whichever ProgressLine of this process is open on a terminal, if any:
  /// a diagnostic printed during the work (cli::fail, a note) then starts on a clean line.
  static void erase_open_line();

 private:
  std::chrono::steady_clock::time_point now() const;

  std::FILE* out_;
  ProgressOptions options_;
  Clock clock_;
  std::chrono::steady_clock::time_point started_, last_;
  bool printed_ = false;    // something was printed (terminal: last_ is its time)
  bool line_open_ = false;  // the terminal's line holds progress that done() erases
};

/// FUSELENS_PROGRESS, one set of values for every FuseLens progress output: these tools' line
/// and the collector's counter replay lines inside the workload (kEnvProgress,
/// collector/include/fuselens/collector/Config.h, which accepts the same values):
///   unset, "" or "auto": progress only when standard error is a terminal;
///   "1" or "always": also when it is not one (here: the terminal's form);
///   "0" or "never": no progress at all.
enum class ProgressMode { Auto, Always, Never };
/// The mode of FUSELENS_PROGRESS's value `text`; nullopt for a value outside the set above.
std::optional<ProgressMode> parse_progress_mode(std::string_view text);

/// Progress options for standard error from the environment: `terminal` = isatty(2), `delay`
/// from FUSELENS_PROGRESS_DELAY_MS (an integer in [0, 600000]; anything else is ignored and the
/// default kept), and FUSELENS_PROGRESS (parse_progress_mode): Never turns it off (`enabled`
/// false), Always prints the terminal's form even off a terminal; Auto or an unknown value: by
/// isatty (prof-run refuses an unknown value before it launches the workload, whose collector
/// would refuse it: tools/prof-run/Environment.h; prof-analyze ignores it).
ProgressOptions stderr_progress_options();

}  // namespace fuselens::tools
