// prof-analyze summary FILE [--format table|csv|json] [--names demangled|short|mangled]
//                          [--nvtx-projection process|thread]
//                          [--section kernels,memops,api,nvtx,memory,all]

#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Cli.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"
#include "summary/SummaryFormat.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

analyzer::SummarySections parse_sections(const std::vector<std::string>& names) {
  auto which = analyzer::SummarySections::none();
  for (const auto& name : names) {
    if (name == "all") return analyzer::SummarySections::all();
    if (name == "kernels") which.kernels = true;
    if (name == "memops") which.memory_operations = true;
    if (name == "api") which.api = true;
    if (name == "nvtx") which.nvtx = true;
    if (name == "memory") which.device_memory = true;
  }
  return which;
}

struct SummaryOptions {
  std::string file;
  std::string format = "table";
  std::string names = "demangled";
  std::string projection = "process";
  std::vector<std::string> sections{"all"};
  WindowOptions window;
};

int run_summary(const SummaryOptions& options) {
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(options.window, spec, steps)) return rc;
  // The kernel and api_call timestamps are checked only if the summary reads their rows: with
  // the aggregates stored at the end of the run it does not (docs/BENCHMARKS.md, "Ten million
  // kernels").
  fuselens::db::Reader reader(options.file, fuselens::db::TimestampCheck::DeferLargeTables);
  analyzer::Window window;
  if (const int rc = open_window(reader, spec, steps, window)) return rc;
  const analyzer::Summary summary =
      analyzer::summarize(reader, name_kind(options.names), nvtx_projection(options.projection));
  if (!summary.cuda_used) {
    return fail("'" + options.file + "': the workload never initialized CUDA; nothing to summarize",
                kExitCapture);
  }
  std::ostringstream text;
  analyzer::write_summary(text, summary, output_format(options.format),
                          parse_sections(options.sections));
  write_windowed(std::cout, text.str(), output_format(options.format), {&window});
  std::cout.flush();
  if (!std::cout) return fail("writing the summary to standard output failed", kExitCapture);
  return kExitOk;
}

}  // namespace

Runner add_summary_command(CLI::App& app) {
  auto options = std::make_shared<SummaryOptions>();
  auto* summary = add_command(app, "summary",
                              "Kernel, memory-operation, CUDA API, NVTX (with GPU projection) and "
                              "device-memory summary tables");
  summary->add_option("FILE", options->file, "Capture written by prof-run")->required();
  add_format_option(summary, options->format);
  add_names_option(summary, options->names, "Kernel names: demangled, short or mangled");
  summary
      ->add_option("--section", options->sections,
                   "Tables to print, comma separated: kernels, memops, api, nvtx, memory, all")
      ->delimiter(',')
      ->check(CLI::IsMember({"kernels", "memops", "api", "nvtx", "memory", "all"}))
      ->default_str("all");
  add_nvtx_projection_option(summary, options->projection);
  add_window_options(summary, options->window);
  return [options] { return run_summary(*options); };
}

}  // namespace fuselens::cli
