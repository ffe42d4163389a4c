// prof-analyze steps FILE [--step-range GLOB | --step-function NAME | --auto]
//                         [--format table|csv|json]

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "Cli.h"
#include "CommandProgress.h"
#include "fuselens/db/Reader.h"
#include "steps/Steps.h"
#include "steps/StepsFormat.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct StepsOptions {
  std::string file;
  std::string format = "table";
  std::string range;
  std::string function;
  bool automatic = false;
  std::string window = "all";
};

int run_steps(const StepsOptions& options) {
  const int methods = (options.range.empty() ? 0 : 1) + (options.function.empty() ? 0 : 1) +
                      (options.automatic ? 1 : 0);
  if (methods > 1) {
    return fail("choose one of --step-range, --step-function and --auto", kExitUsage);
  }
  analyzer::StepOptions step_options;
  if (!options.range.empty()) step_options.range_glob = options.range;
  if (!options.function.empty()) step_options.function = options.function;
  step_options.automatic = options.automatic;
  analyzer::WindowSpec spec;
  try {
    spec = analyzer::parse_window(options.window);
  } catch (const analyzer::WindowError& e) {
    return fail(e.what(), kExitUsage);
  }
  CommandProgress progress("steps");  // on a terminal, after 1 s (CommandProgress.h)
  // Kernel and api_call timestamps are checked only where their rows are read (the search).
  fuselens::db::Reader reader(options.file, fuselens::db::TimestampCheck::DeferLargeTables);
  if (reader.processes().empty()) {
    return fail("'" + options.file + "': the workload never initialized CUDA; no steps to find",
                kExitCapture);
  }
  analyzer::StepReport report;
  // The default method's steps as prof-run stored them when the run ended (the same analysis,
  // without reading every launch again: ten million launches in 0.1 s), also when it found none;
  // searched otherwise, and when prof-run skipped the search (a "none" row).
  std::optional<analyzer::StepReport> stored;
  if (methods == 0) stored = analyzer::stored_step_report(reader);
  if (stored && !stored->skipped) {
    report = std::move(*stored);
  } else {
    try {
      // The launches' timestamps are checked where the search reads them (the reader defers the
      // check to the first statement that reads them): a search that reads none (one kernel
      // name, docs/steps.md) checks none.
      report = analyzer::analyze_steps(reader, step_options);
    } catch (const analyzer::StepError& e) {
      return fail("'" + options.file + "': " + e.what(), kExitWindow);
    }
  }
  // The window lists the steps that start inside it; the steady window, distribution and
  // outliers stay those of all the steps.
  analyzer::Window window;
  if (const int rc = open_window(reader, spec, step_options, window)) return rc;
  std::erase_if(report.steps,
                [&](const analyzer::Step& s) { return !window.contains(s.start_ns); });
  std::ostringstream text;
  analyzer::write_steps(text, report, output_format(options.format));
  progress.done();
  write_windowed(std::cout, text.str(), output_format(options.format), {&window});
  std::cout.flush();
  if (!std::cout) return fail("writing the steps to standard output failed", kExitCapture);
  return kExitOk;
}

}  // namespace

Runner add_steps_command(CLI::App& app) {
  auto options = std::make_shared<StepsOptions>();
  auto* steps = add_command(app, "steps",
                            "Training or inference steps (NVTX ranges, a step function or the "
                            "launch sequence's period): per-step time, GPU busy share, HTA's "
                            "breakdowns; the steady window and outlier steps (docs/steps.md)");
  steps->footer(footer("steps") +
                "\n  steps: 2 also when more than one of --step-range, --step-function and "
                "--auto is given");
  steps->add_option("FILE", options->file, "Capture written by prof-run")->required();
  steps->add_option("--step-range", options->range,
                    "NVTX ranges whose text matches GLOB (any case; outermost per thread) are the "
                    "steps");
  steps->add_option(
      "--step-function", options->function,
      "Launches under calls of function NAME (a suffix at :: or .) delimit the steps");
  steps->add_flag("--auto", options->automatic,
                  "Steps from the period of the kernel sequence in launch order");
  add_format_option(steps, options->format);
  steps
      ->add_option("--window", options->window,
                   "List the steps that start inside: all, steady, steps:A-B, range:GLOB or "
                   "time:T0-T1 (docs/windows.md)")
      ->capture_default_str();
  return [options] { return run_steps(*options); };
}

}  // namespace fuselens::cli
