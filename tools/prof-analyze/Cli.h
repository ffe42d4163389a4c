#pragma once
// Shared pieces of prof-analyze's subcommands: exit codes, the one-line error printer, and the
// registration signature every subcommand file implements.

#include <CLI/CLI.hpp>

#include "summary/Summary.h"
#include "summary/SummaryFormat.h"
#include "window/Window.h"

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace fuselens::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCapture = 1;       // a capture cannot be read or holds nothing to analyze
inline constexpr int kExitUsage = 2;         // command-line error
inline constexpr int kExitFlagged = 3;       // a --fail-on / --fail-if-slower condition held
inline constexpr int kExitWindow = 4;        // the window or step method selects nothing
inline constexpr int kExitInconclusive = 5;  // --fail-if-slower: the noise is too wide to decide

inline constexpr const char* kFooter =
    "Exit status:\n"
    "  0  success\n"
    "  1  a capture cannot be read (missing, not a FuseLens capture, corrupt, written by a\n"
    "     newer FuseLens) or holds nothing to analyze (the workload never initialized CUDA)\n"
    "  2  command-line error (unknown option, bad value, missing FILE)\n"
    "  3  a CI gate was triggered (--fail-on; --fail-if-slower: a candidate significantly\n"
    "     slower)\n"
    "  4  the window selects nothing (--window steps the capture lacks, a range that never\n"
    "     occurs, a time span outside the capture) or --step-range/--step-function finds no step\n"
    "  5  compare --fail-if-slower: inconclusive, no candidate significantly slower but the\n"
    "     interval of one contains the threshold (docs/compare-gate.md)";

/// Prints "prof-analyze: error: MESSAGE" on one line (newlines folded, other control characters
/// written as \xNN) and returns `code`.
int fail(std::string message, int code);

/// The "Examples:" lines of subcommand `command` ("": prof-analyze itself), nullptr when it has
/// none; every subcommand has some (tests/analyzer/TerminalTest.cpp checks each --help).
const char* examples(const std::string& command);
/// The footer of `command`'s --help: its examples, then `exit_status` (kFooter by default).
std::string footer(const std::string& command, const std::string& exit_status = kFooter);

/// Adds subcommand `name` to `app` with its one-line `description` and footer(name).
CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description);

/// The value of --names ("demangled", "short" or "mangled", checked by add_names_option).
analyzer::NameKind name_kind(const std::string& names);
/// The value of --format ("table", "csv" or "json", checked by add_format_option).
analyzer::OutputFormat output_format(const std::string& format);
/// Adds --names (demangled, short or mangled) to `command`, bound to `names`.
CLI::Option* add_names_option(
    CLI::App* command, std::string& names,
    const std::string& help = "Kernel names: demangled, short or mangled");
/// Adds --format (table, csv or json) to `command`, bound to `format`.
CLI::Option* add_format_option(CLI::App* command, std::string& format);
/// Adds --nvtx-projection (process or thread: analyzer::NvtxProjection, CompareProjection.h) to
/// `command`, bound to `projection`; another value is a usage error.
CLI::Option* add_nvtx_projection_option(CLI::App* command, std::string& projection);
/// The value of --nvtx-projection (checked by add_nvtx_projection_option).
analyzer::NvtxProjection nvtx_projection(const std::string& projection);
/// Adds --frames (auto, user, python, native, all: analyzer::FramesMode) to `command`, bound to
/// `frames`; another value is a usage error (one line, kExitUsage).
CLI::Option* add_frames_option(CLI::App* command, std::string& frames);

/// --window and the step-method options (--step-range, --step-function, --auto-steps) of a
/// subcommand that describes a window of the capture (analyzer/window/Window.h).
struct WindowOptions {
  std::optional<std::string> window;  ///< as given; nullopt: default_window
  std::string default_window = "steady";
  std::string step_range, step_function;
  bool automatic = false;
};
/// Adds the options above to `command`, --window defaulting to `default_window`.
void add_window_options(CLI::App* command, WindowOptions& options,
                        const std::string& default_window = "steady");
/// Checks the options before any capture is opened: fills `spec` and `steps`, or reports one
/// line and returns kExitUsage (a malformed window, several step methods).
int parse_window_options(const WindowOptions& options, analyzer::WindowSpec& spec,
                         analyzer::StepOptions& steps);
/// Resolves the window on `reader` and restricts the reader to it; reports one line and returns
/// kExitWindow when the window selects nothing, kExitOk otherwise. `before_restrict`, when set,
/// runs between the two on the unrestricted reader (an analysis that numbers steps over the
/// whole capture: ranks).
/// On an aggregate capture (docs/aggregate.md) it first prints note_aggregate_capture's line.
int open_window(db::Reader& reader, const analyzer::WindowSpec& spec,
                const analyzer::StepOptions& steps, analyzer::Window& window,
                const std::function<void(const analyzer::Window&)>& before_restrict = {},
                bool reads_aggregates = false);
/// On an aggregate capture (docs/aggregate.md) prints one line on standard error: with
/// `reads_aggregates` (summary and cct without --window), that the output is the whole run's
/// statistics; otherwise that the analysis needs a trace and shows the capture windows' trace
/// (which windows, how many rows), or that the capture holds none. Nothing on other captures.
/// open_window prints it; an analysis answering from stored results (analyzer/store) calls it.
void note_aggregate_capture(const db::Reader& reader, bool reads_aggregates);
/// Writes `text` (an analysis written in `format`) naming the window(s) it describes: a
/// "Window: ..." line above a table, a `window` column appended to every CSV table, a "window"
/// member in JSON (its object, or {"window", "rows"} around an array). Two windows are the
/// baseline's and the candidate's.
void write_windowed(std::ostream& out, const std::string& text, analyzer::OutputFormat format,
                    const std::vector<const analyzer::Window*>& windows);

/// A subcommand registers its options on `app` and returns what to run when it is chosen.
using Runner = std::function<int()>;
Runner add_summary_command(CLI::App& app);
Runner add_cct_command(CLI::App& app);
Runner add_export_command(CLI::App& app);
Runner add_flags_command(CLI::App& app);
Runner add_compare_command(CLI::App& app);
Runner add_roofline_command(CLI::App& app);
Runner add_steps_command(CLI::App& app);
Runner add_modules_command(CLI::App& app);
Runner add_merge_command(CLI::App& app);
Runner add_ranks_command(CLI::App& app);
Runner add_convert_command(CLI::App& app);

}  // namespace fuselens::cli
