// prof-analyze steps FILE [--step-range GLOB | --step-function NAME | --auto]
//                         [--format table|csv|json]

#include <iostream>
#include <memory>
#include <string>

#include "Cli.h"
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
  const fuselens::db::Reader reader(options.file);
  if (reader.processes().empty()) {
    return fail("'" + options.file + "': the workload never initialized CUDA; no steps to find",
                kExitCapture);
  }
  analyzer::StepReport report;
  try {
    report = analyzer::analyze_steps(reader, step_options);
  } catch (const analyzer::StepError& e) {
    return fail("'" + options.file + "': " + e.what(), kExitCapture);
  }
  analyzer::write_steps(std::cout, report, output_format(options.format));
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
  steps->footer(std::string(kFooter) +
                "\n  steps: 1 also when --step-range or --step-function finds no step; 2 when "
                "more than one\n  of --step-range, --step-function and --auto is given");
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
  return [options] { return run_steps(*options); };
}

}  // namespace fuselens::cli
