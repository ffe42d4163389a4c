// prof-analyze summary FILE [--format table|csv|json] [--names demangled|short|mangled]
//                          [--nvtx-projection process|thread]
//                          [--report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,
//                                    cuda_gpu_mem_size_sum,cuda_api_sum,nvtx_sum,
//                                    nvtx_gpu_proj_sum,device_memory_sum,
//                                    kernels,memops,api,nvtx,memory,all]   (alias: --section)
//                          [--output PREFIX]
//
// With --format csv and an nsys report name or --output, the CSV is Nsight Systems' (`nsys
// stats`): one CSV per report with nsys's column headers (analyzer/summary/NsysReports.h),
// written to PREFIX_<report>.csv (each complete or not at all, as exports) or, without
// --output, to standard output (one report: its CSV alone; several: each after a "# <report>"
// line, separated by a blank line). Otherwise the summary's own formats, the reports naming
// their sections.

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Cli.h"
#include "CommandProgress.h"
#include "export/ExportFile.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Reader.h"
#include "summary/NsysReports.h"
#include "summary/NvtxGpuProjection.h"
#include "summary/Summary.h"
#include "summary/SummaryFormat.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

/// The reports named (nsys names or section aliases), each once, in the order of `all`.
std::vector<analyzer::NsysReport> requested_reports(const std::vector<std::string>& names) {
  std::vector<analyzer::NsysReport> out;
  for (const auto report : analyzer::reports_named("all")) {
    for (const auto& name : names) {
      const auto named = analyzer::reports_named(name);
      if (std::find(named.begin(), named.end(), report) != named.end()) {
        out.push_back(report);
        break;
      }
    }
  }
  return out;
}

analyzer::SummarySections sections_of(const std::vector<analyzer::NsysReport>& reports) {
  auto which = analyzer::SummarySections::none();
  for (const auto r : reports) {
    switch (r) {
      case analyzer::NsysReport::KernSum:
        which.kernels = true;
        break;
      case analyzer::NsysReport::MemTimeSum:
      case analyzer::NsysReport::MemSizeSum:
        which.memory_operations = true;
        break;
      case analyzer::NsysReport::ApiSum:
        which.api = true;
        break;
      case analyzer::NsysReport::NvtxSum:
      case analyzer::NsysReport::NvtxGpuProjSum:
        which.nvtx = true;
        break;
      case analyzer::NsysReport::DeviceMemorySum:
        which.device_memory = true;
        break;
    }
  }
  return which;
}

/// The summary as nsys stats CSVs: files PREFIX_<report>.csv, or standard output.
int write_nsys_reports(const fuselens::db::Reader& reader, const analyzer::Summary& summary,
                       const std::vector<analyzer::NsysReport>& reports, const std::string& file,
                       const std::string& prefix) {
  std::vector<analyzer::NvtxGpuProjectionRow> projection;
  if (std::find(reports.begin(), reports.end(), analyzer::NsysReport::NvtxGpuProjSum) !=
      reports.end()) {
    projection = analyzer::nvtx_gpu_projection(reader, summary.nvtx_projection);
  }
  if (prefix.empty()) {
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (reports.size() > 1) {
        std::cout << (i ? "\n" : "") << "# " << analyzer::to_string(reports[i]) << "\n";
      }
      analyzer::write_nsys_csv(std::cout, reports[i], summary, &projection);
    }
    std::cout.flush();
    if (!std::cout) return fail("writing the summary to standard output failed", kExitCapture);
    return kExitOk;
  }
  for (const auto report : reports) {
    analyzer::ExportFile out(analyzer::nsys_report_path(prefix, report), {file});
    analyzer::write_nsys_csv(out.stream(), report, summary, &projection);
    out.commit();
    std::cout << "Generated: " << out.path() << "\n";
  }
  return kExitOk;
}

struct SummaryOptions {
  std::string file;
  std::string format = "table";
  std::string names = "demangled";
  std::string projection = "process";
  std::vector<std::string> sections{"all"};
  std::string output;  // PREFIX of the nsys-style CSV files
  WindowOptions window;
};

int run_summary(const SummaryOptions& options) {
  const auto reports = requested_reports(options.sections);
  const bool nsys_names =
      std::any_of(options.sections.begin(), options.sections.end(), [](const std::string& n) {
        return analyzer::is_nsys_report_name(n) || n == "device_memory_sum";
      });
  if (!options.output.empty() && options.format != "csv") {
    return fail(
        "summary: --output PREFIX writes one CSV per report (nsys stats' files); add "
        "--format csv",
        kExitUsage);
  }
  const bool nsys_csv = options.format == "csv" && (nsys_names || !options.output.empty());
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(options.window, spec, steps)) return rc;
  // The kernel and api_call timestamps are checked only if the summary reads their rows: with
  // the aggregates stored at the end of the run it does not (docs/BENCHMARKS.md, "Ten million
  // kernels").
  CommandProgress progress("summary");  // on a terminal, after 1 s (CommandProgress.h)
  fuselens::db::Reader reader(options.file, fuselens::db::TimestampCheck::DeferLargeTables);
  analyzer::Window window;
  // An aggregate capture holds the whole run's statistics: read them unless --window asks for the
  // windows' trace (docs/aggregate.md).
  const bool whole_run = fuselens::db::has_aggregates(reader) && !options.window.window;
  if (whole_run) spec = analyzer::parse_window("all");
  if (const int rc = open_window(reader, spec, steps, window, {}, whole_run)) return rc;
  const analyzer::Summary summary =
      analyzer::summarize(reader, name_kind(options.names), nvtx_projection(options.projection));
  if (!summary.cuda_used) {
    return fail("'" + options.file + "': the workload never initialized CUDA; nothing to summarize",
                kExitCapture);
  }
  progress.done();
  if (nsys_csv) return write_nsys_reports(reader, summary, reports, options.file, options.output);
  std::ostringstream text;
  analyzer::write_summary(text, summary, output_format(options.format), sections_of(reports));
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
      ->add_option("--report,--section", options->sections,
                   "Reports to print, comma separated: nsys stats' cuda_gpu_kern_sum, "
                   "cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_api_sum, nvtx_sum, "
                   "nvtx_gpu_proj_sum, FuseLens's device_memory_sum, or the section names "
                   "kernels, memops, api, nvtx, memory, all. With --format csv an nsys name "
                   "gives nsys's CSV and column headers")
      ->delimiter(',')
      ->check(CLI::IsMember({"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                             "cuda_api_sum", "nvtx_sum", "nvtx_gpu_proj_sum", "device_memory_sum",
                             "kernels", "memops", "api", "nvtx", "memory", "all"}))
      ->default_str("all");
  summary->add_option(
      "-o,--output", options->output,
      "With --format csv: write each report to PREFIX_<report>.csv (nsys stats' file names), "
      "e.g. -o run1 gives run1_cuda_gpu_kern_sum.csv");
  add_nvtx_projection_option(summary, options->projection);
  add_window_options(summary, options->window);
  return [options] { return run_summary(*options); };
}

}  // namespace fuselens::cli
