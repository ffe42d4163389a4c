// prof-analyze flags FILE [--format table|csv|json] [--names short|demangled|mangled]
//                        [--threshold KEY=VALUE]... [--rules R[,R]] [--fail-on R[,R]]
//                        [--limit N] [--list]

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "Cli.h"
#include "CommandProgress.h"
#include "flags/Flags.h"
#include "flags/FlagsFormat.h"
#include "fuselens/db/Reader.h"
#include "store/AnalysisStore.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct FlagsOptions {
  std::string file;
  std::string format = "table";
  std::string names = "short";
  std::string frames = "auto";
  std::vector<std::string> thresholds;
  std::vector<std::string> rules;
  std::vector<std::string> fail_on;
  bool list = false;
  std::size_t limit = 20;
  WindowOptions window;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

void print_rules() {
  std::cout << "Rules:\n";
  for (const auto& r : analyzer::flag_rules()) {
    std::cout << fmt::format("  {:<16} {} ({})\n", r.id, r.title, r.source);
  }
  std::cout << "\nThresholds (--threshold KEY=VALUE):\n";
  for (const auto& t : analyzer::flag_thresholds()) {
    std::cout << fmt::format("  {:<34} {:>8}  {} ({})\n", t.key, t.default_value, t.meaning,
                             t.source);
  }
}

int run_flags_command(const FlagsOptions& options) {
  if (options.list) {
    print_rules();
    return kExitOk;
  }
  if (options.file.empty())
    return fail("flags: FILE is required (see 'prof-analyze flags --help')", kExitUsage);
  analyzer::FlagsConfig config;
  std::vector<std::string> fail_on;
  try {
    for (const auto& t : options.thresholds) config.set(t);
    fail_on = analyzer::parse_rule_list(join(options.fail_on));
    auto rules = analyzer::parse_rule_list(join(options.rules));
    if (!rules.empty()) {
      rules.insert(rules.end(), fail_on.begin(), fail_on.end());  // gated rules always run
      config.select_rules(rules);
    }
  } catch (const analyzer::FlagsError& e) {
    return fail(std::string("flags: ") + e.what(), kExitUsage);
  }
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(options.window, spec, steps)) return rc;
  CommandProgress progress("flags");  // on a terminal, after 1 s (CommandProgress.h)
  // Kernel and api_call timestamps are checked only where their rows are read (the row path).
  fuselens::db::Reader reader(options.file, fuselens::db::TimestampCheck::DeferLargeTables);
  analyzer::Window window;
  const auto names = name_kind(options.names);
  const auto frames = *analyzer::parse_frames_mode(options.frames);
  // The report stored when the run ended (analyzer/store/AnalysisStore.h), else the rows.
  std::optional<analyzer::FlagsReport> stored;
  if (analyzer::stored_flags_config(config, names, frames)) {
    if (auto w = analyzer::stored_results_window(reader, spec, steps)) {
      stored = analyzer::load_stored_flags(reader, *w);
      if (stored) {
        window = std::move(*w);
        note_aggregate_capture(reader, false);  // as open_window would have
      }
    }
  }
  if (!stored) {
    reader.check_table_timestamps("kernel");
    reader.check_table_timestamps("api_call");
    if (const int rc = open_window(reader, spec, steps, window)) return rc;
  }
  const analyzer::FlagsReport report =
      stored ? std::move(*stored) : analyzer::run_flags(reader, config, names, &window, frames);
  if (!report.cuda_used) {
    return fail("'" + options.file + "': the workload never initialized CUDA; nothing to flag",
                kExitCapture);
  }
  std::ostringstream text;
  analyzer::write_flags(text, report, output_format(options.format), options.limit);
  progress.done();
  write_windowed(std::cout, text.str(), output_format(options.format), {&window});
  std::cout.flush();
  if (!std::cout) return fail("writing the flags to standard output failed", kExitCapture);

  std::vector<std::string> fired;
  for (const auto& rule : fail_on) {
    if (report.hit_count(rule) > 0) fired.push_back(rule);
  }
  if (!fired.empty()) {
    std::cerr << "prof-analyze: flagged: " << join(fired) << " (--fail-on)" << std::endl;
    return kExitFlagged;
  }
  return kExitOk;
}

}  // namespace

Runner add_flags_command(CLI::App& app) {
  auto options = std::make_shared<FlagsOptions>();
  auto* flags =
      add_command(app, "flags",
                  "Expert rules: launch overhead, GPU idle, synchronous copies and syncs, fusion "
                  "opportunities (docs/rules.md)");
  flags->add_option("FILE", options->file, "Capture written by prof-run");
  add_format_option(flags, options->format);
  add_names_option(flags, options->names, "Kernel names: short, demangled or mangled");
  add_frames_option(flags, options->frames);
  flags
      ->add_option("--threshold", options->thresholds,
                   "Change a threshold, e.g. launch_short.runtime_cutoff_us=50 (repeatable; "
                   "--list shows all)")
      ->allow_extra_args(false);
  flags->add_option("--rules", options->rules, "Run only these rules, comma separated")
      ->allow_extra_args(false);
  flags
      ->add_option("--fail-on", options->fail_on,
                   "Exit with status 3 when any of these rules (comma separated) has a hit")
      ->allow_extra_args(false);
  flags
      ->add_option("--limit", options->limit,
                   "Table format: at most N hits, ranked across rules by time at stake (0: all)")
      ->check(CLI::NonNegativeNumber)  // CLI11 would wrap "-3" into a huge unsigned value
      ->capture_default_str();
  flags->add_flag("--list", options->list, "List the rules and thresholds, then exit");
  add_window_options(flags, options->window);
  return [options] { return run_flags_command(*options); };
}

}  // namespace fuselens::cli
