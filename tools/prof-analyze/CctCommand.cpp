// prof-analyze cct FILE [--view top-down|bottom-up|flat] [--metric gpu_time|launches|bytes]
//                       [--depth N] [--limit N] [--min-percent P] [--filter REGEX]
//                       [--show-internal]
//                       [--phase all|forward|backward|unknown] [--split-phase]
//                       [--frames auto|user|python|native|all]
//                       [--format table|csv|json]

#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "Cli.h"
#include "Color.h"
#include "CommandProgress.h"
#include "cct/CallingContextFormat.h"
#include "compiled/Compiled.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Reader.h"
#include "store/AnalysisStore.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct CctOptions {
  std::string file;
  std::string view = "top-down";
  std::string metric = "gpu_time";
  std::string format = "table";
  std::optional<int> depth;
  std::size_t limit = 10000;  // rows; 0: all (issue 22: bounded output by default)
  double min_percent = 0;
  std::string filter;
  bool show_internal = false;
  std::string phase = "all";
  bool split_phase = false;
  std::string frames = "auto";
  WindowOptions window;
};

int run_cct(const CctOptions& o) {
  analyzer::CctDisplay display;
  display.max_depth = o.depth;
  display.min_percent = o.min_percent;
  display.max_rows = o.limit;
  if (!o.filter.empty()) {
    try {
      display.filter.emplace(o.filter);
    } catch (const analyzer::RegexError& e) {
      return fail("--filter: '" + o.filter + "' is not a regular expression: " + e.what(),
                  kExitUsage);
    }
  }
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(o.window, spec, steps)) return rc;
  CommandProgress progress("cct");  // on a terminal, after 1 s (CommandProgress.h)
  // Kernel and api_call timestamps are checked only where their rows are read (the row path).
  db::Reader reader(o.file, db::TimestampCheck::DeferLargeTables);
  analyzer::Window window;
  // torch.compile kernels' source lines: their marks precede the window, read them first.
  auto kernel_sources = analyzer::compiled_kernel_sources(reader);
  // An aggregate capture holds the whole run's statistics: read them unless --window asks for the
  // windows' trace (docs/aggregate.md). Stored results are for the default window only, so an
  // aggregate capture's whole-run answer is computed (from its aggregate rows: small).
  const bool whole_run = fuselens::db::has_aggregates(reader) && !o.window.window;
  if (whole_run) spec = analyzer::parse_window("all");
  // The groups stored when the run ended (analyzer/store/AnalysisStore.h), else the rows.
  std::optional<std::vector<analyzer::cct::OperationGroup>> stored;
  if (auto w = analyzer::stored_results_window(reader, spec, steps)) {
    stored = analyzer::load_stored_cct(reader, *w);
    if (stored) {
      window = std::move(*w);
      note_aggregate_capture(reader, whole_run);  // as open_window would have
    }
  }
  if (!stored) {
    reader.check_table_timestamps("kernel");
    reader.check_table_timestamps("api_call");
    if (const int rc = open_window(reader, spec, steps, window, {}, whole_run)) return rc;
  }
  analyzer::CctOptions options;
  options.kernel_sources = std::move(kernel_sources);
  options.view = o.view == "bottom-up" ? analyzer::CctView::BottomUp
                 : o.view == "flat"    ? analyzer::CctView::Flat
                                       : analyzer::CctView::TopDown;
  options.metric = o.metric == "launches" ? analyzer::CctMetric::Launches
                   : o.metric == "bytes"  ? analyzer::CctMetric::Bytes
                                          : analyzer::CctMetric::GpuTime;
  options.show_internal = o.show_internal;
  if (o.phase == "forward") options.phase = analyzer::CctPhase::Forward;
  if (o.phase == "backward") options.phase = analyzer::CctPhase::Backward;
  if (o.phase == "unknown") options.phase = analyzer::CctPhase::Unknown;
  options.split_phase = o.split_phase;
  options.frames = *analyzer::parse_frames_mode(o.frames);
  const auto report = stored ? analyzer::cct::report_from_groups(reader, *stored, options)
                             : analyzer::calling_context_report(reader, options);
  if (!report.available)
    return fail("'" + o.file + "': " + report.unavailable_reason, kExitCapture);
  std::ostringstream text;
  const std::size_t left_out = analyzer::write_cct(text, report, output_format(o.format), display);
  progress.done();
  if (left_out > 0 && output_format(o.format) == analyzer::OutputFormat::Csv) {
    std::cerr << tools::diagnostic_prefix("prof-analyze", tools::Tone::Note) << left_out
              << " more rows not written (--limit 0 writes all)" << std::endl;
  }
  write_windowed(std::cout, text.str(), output_format(o.format), {&window});
  std::cout.flush();
  return std::cout ? kExitOk : fail("writing to standard output failed", kExitCapture);
}

}  // namespace

Runner add_cct_command(CLI::App& app) {
  auto o = std::make_shared<CctOptions>();
  auto* cmd = add_command(
      app, "cct",
      "Calling-context attribution: GPU time, launches and bytes charged to the code that "
      "launched them (top-down, bottom-up, flat)");
  cmd->add_option("FILE", o->file, "Capture written by prof-run")->required();
  cmd->add_option("--view", o->view, "top-down, bottom-up or flat")
      ->check(CLI::IsMember({"top-down", "bottom-up", "flat"}))
      ->capture_default_str();
  cmd->add_option("--metric", o->metric, "Metric for shares and ordering")
      ->check(CLI::IsMember({"gpu_time", "launches", "bytes"}))
      ->capture_default_str();
  cmd->add_option("--depth", o->depth, "Hide rows deeper than N (the root is 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--limit", o->limit,
                  "At most N rows, in depth-first order; the rest are counted in a last line "
                  "(0: all)")
      ->check(CLI::NonNegativeNumber)  // CLI11 would wrap "-3" into a huge unsigned value
      ->capture_default_str();
  cmd->add_option("--min-percent", o->min_percent, "Hide rows under P % of the total")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--filter", o->filter,
                  "Keep rows whose name matches REGEX (RE2 syntax, matched in linear time; at most "
                  "4096 bytes), with their ancestors and descendants");
  cmd->add_flag("--show-internal", o->show_internal,
                "Show frames inside libcuda, libcudart, libcupti and the collector");
  cmd->add_option("--phase", o->phase,
                  "PyTorch: only the GPU operations of the forward or backward pass (unknown: "
                  "not launched by PyTorch)")
      ->check(CLI::IsMember({"all", "forward", "backward", "unknown"}))
      ->capture_default_str();
  cmd->add_flag("--split-phase", o->split_phase,
                "Top-down and bottom-up: a first level per phase (<forward>, <backward>)");
  add_frames_option(cmd, o->frames);
  add_format_option(cmd, o->format);
  add_window_options(cmd, o->window);
  return [o] { return run_cct(*o); };
}

}  // namespace fuselens::cli
