#pragma once
// Shared pieces of prof-analyze's subcommands: exit codes, the one-line error printer, and the
// registration signature every subcommand file implements.

#include <CLI/CLI.hpp>

#include "summary/Summary.h"
#include "summary/SummaryFormat.h"

#include <functional>
#include <string>

namespace fuselens::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCapture = 1;  // a capture cannot be read or holds nothing to analyze
inline constexpr int kExitUsage = 2;    // command-line error
inline constexpr int kExitFlagged = 3;  // a --fail-on / --fail-if-slower condition held

inline constexpr const char* kFooter =
    "Exit status:\n"
    "  0  success\n"
    "  1  a capture cannot be read (missing, not a FuseLens capture, corrupt, written by a\n"
    "     newer FuseLens) or holds nothing to analyze (the workload never initialized CUDA)\n"
    "  2  command-line error (unknown option, bad value, missing FILE)\n"
    "  3  a CI gate (--fail-on, --fail-if-slower) was triggered";

/// Prints "prof-analyze: error: MESSAGE" on one line (newlines folded, other control characters
/// written as \xNN) and returns `code`.
int fail(std::string message, int code);

/// Adds subcommand `name` to `app` with its one-line `description` and the exit-status footer.
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

/// A subcommand registers its options on `app` and returns what to run when it is chosen.
using Runner = std::function<int()>;
Runner add_summary_command(CLI::App& app);
Runner add_cct_command(CLI::App& app);
Runner add_export_command(CLI::App& app);
Runner add_flags_command(CLI::App& app);
Runner add_compare_command(CLI::App& app);
Runner add_roofline_command(CLI::App& app);
Runner add_steps_command(CLI::App& app);

}  // namespace fuselens::cli
