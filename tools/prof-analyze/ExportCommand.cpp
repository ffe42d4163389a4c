// prof-analyze export FILE [FILE2] --format html|json|csv|chrome-trace -o OUT[.gz] [--rank N]
//                     [--names demangled|short|mangled] [--frames auto|user|python|native|all]
//                     [--baseline GLOB --candidate GLOB]   (html or json, one FILE)
//
// --baseline/--candidate compare two sets of NVTX ranges of FILE (compare_ranges, as
// `prof-analyze compare FILE --baseline GLOB --candidate GLOB`): the HTML report shows that
// comparison and heatmap instead of the "*/unfused/*" vs "*/fused/*" auto-detection, and the
// JSON document gains a "comparison" key (compare_to_json).
//
// Writes OUT.tmp and renames it to OUT once complete ("-o -" writes to standard output), so a
// failed export never leaves a partial OUT; an OUT ending in ".gz" is written gzip-compressed.
// chrome-trace takes one capture, and with --rank N only the processes of rank N (the PyTorch
// profiler's one trace per rank, which Holistic Trace Analysis reads from a directory).

#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "Cli.h"
#include "CommandProgress.h"
#include "compare/Compare.h"
#include "export/Export.h"
#include "export/ExportChromeTrace.h"
#include "export/ExportFile.h"
#include "export/ExportHtml.h"
#include "export/ExportTables.h"
#include "fuselens/db/Reader.h"
#include "store/AnalysisStore.h"

#ifndef FUSELENS_VERSION
#define FUSELENS_VERSION "unknown"
#endif

namespace fuselens::cli {
namespace {

// The window as the exports name it (otherData.window of a Chrome trace, the report's window
// line), with the sampled line of a sampled capture (prof-run --sample) after it.
std::string window_text(const analyzer::Window& w) {
  return w.sampling ? w.description + "; " + analyzer::sampling_line(*w.sampling) : w.description;
}

namespace analyzer = fuselens::analyzer;

struct ExportOptions {
  std::vector<std::string> files;  // FILE [FILE2]
  std::string format;
  std::string output;
  std::string names = "demangled";
  std::string frames = "auto";
  std::string baseline, candidate;   // NVTX range globs; both or neither
  std::optional<std::int32_t> rank;  // chrome-trace: only this rank's processes
  WindowOptions window;              // window "": steady, all with range patterns
};

const std::string kGenerator = std::string("FuseLens prof-analyze ") + FUSELENS_VERSION;

int run_export(const ExportOptions& options) {
  const auto format = analyzer::parse_export_format(options.format);
  if (!format) return fail("unknown export format '" + options.format + "'", kExitUsage);
  if (options.rank && *format != analyzer::ExportFormat::ChromeTrace) {
    return fail("export: --rank selects the processes of a chrome-trace export", kExitUsage);
  }
  if (*format == analyzer::ExportFormat::ChromeTrace && options.files.size() > 1) {
    return fail(
        "--format chrome-trace exports one capture; got " + std::to_string(options.files.size()),
        kExitUsage);
  }
  const bool patterns = !options.baseline.empty() || !options.candidate.empty();
  if (patterns) {
    if (options.baseline.empty() || options.candidate.empty()) {
      return fail("export: --baseline GLOB and --candidate GLOB go together; give both or neither",
                  kExitUsage);
    }
    if (*format != analyzer::ExportFormat::Html && *format != analyzer::ExportFormat::Json) {
      return fail("export: --baseline/--candidate need --format html or json", kExitUsage);
    }
    if (options.files.size() > 1) {
      return fail("export: --baseline/--candidate select ranges of one FILE; not with two files",
                  kExitUsage);
    }
  }
  const analyzer::NameKind kernel_names = name_kind(options.names);
  WindowOptions window_options = options.window;
  window_options.default_window = patterns ? "all" : "steady";
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(window_options, spec, steps)) return rc;

  // On a terminal, after 1 s: "[fuselens] export FORMAT: STAGE, N rows read, T s" (no progress
  // when the export itself goes to a terminal: -o - would mix with it).
  const bool to_terminal = options.output == "-" && ::isatty(STDOUT_FILENO) != 0;
  tools::ProgressOptions progress_options = tools::stderr_progress_options();
  if (to_terminal) progress_options.enabled = false;
  CommandProgress progress("export " + options.format, stderr, progress_options);
  progress.stage("reading");
  // Open and check every capture, and restrict it to its window, before creating the output.
  std::vector<std::unique_ptr<fuselens::db::Reader>> readers;
  std::vector<analyzer::Window> windows(options.files.size());
  // The ranks section numbers each rank's steps over the whole capture: computed before the
  // window restricts the reader (load_export_analyses does it for an unrestricted one).
  std::vector<std::optional<analyzer::RanksReport>> ranks(options.files.size());
  std::vector<std::string> ranks_notes(options.files.size());
  // The HTML report's cct and flags as stored when the run ended for the window it describes
  // (analyzer/store/AnalysisStore.h), read before the window restricts the reader.
  std::vector<analyzer::StoredAnalyses> stored(options.files.size());
  const auto frames = *analyzer::parse_frames_mode(options.frames);
  for (std::size_t i = 0; i < options.files.size(); ++i) {
    const std::string& file = options.files[i];
    // The kernel and launch call timestamps are checked where they are first read (Reader::
    // prepare): every format can come from the results stored when the run ended (the summary,
    // the extent, cct, flags, the NVTX range projections) without reading ten million rows.
    readers.push_back(std::make_unique<fuselens::db::Reader>(
        file, fuselens::db::TimestampCheck::DeferLargeTables));
    if (readers.back()->processes().empty()) {
      return fail("'" + file + "': the workload never initialized CUDA; nothing to export",
                  kExitCapture);
    }
    auto ranks_of = [&](const analyzer::Window& w) {
      if (*format != analyzer::ExportFormat::Html || w.whole) return;
      if (!analyzer::may_be_distributed(*readers.back())) return;  // no Ranks section
      try {
        ranks[i] = analyzer::analyze_ranks(*readers.back(), &w, steps);
      } catch (const std::exception& e) {
        ranks_notes[i] = std::string("The ranks analysis could not be computed: ") + e.what();
      }
    };
    if (*format == analyzer::ExportFormat::Html) {
      if (auto w = analyzer::stored_results_window(*readers.back(), spec, steps)) {
        stored[i].cct_groups = analyzer::load_stored_cct(*readers.back(), *w);
        if (analyzer::stored_flags_config(analyzer::FlagsConfig(), analyzer::NameKind::Short,
                                          frames)) {
          stored[i].flags = analyzer::load_stored_flags(*readers.back(), *w);
        }
      }
    }
    if (const int rc = open_window(*readers.back(), spec, steps, windows[i], ranks_of)) return rc;
  }

  std::optional<analyzer::CompareReport> comparison;
  if (patterns) {
    try {
      comparison = analyzer::compare_ranges(*readers.front(), options.baseline, options.candidate);
    } catch (const analyzer::CompareError& e) {
      return fail(std::string("export: ") + e.what(), kExitCapture);
    }
  }

  if (*format == analyzer::ExportFormat::ChromeTrace) {
    analyzer::ChromeTraceOptions trace{kernel_names, kGenerator, window_text(windows.front()), {}};
    if (options.rank) {
      for (const auto& r : readers.front()->process_ranks()) {
        if (r.rank == *options.rank) trace.pids.push_back(r.pid);
      }
      if (trace.pids.empty()) {
        return fail("export: '" + options.files.front() + "' holds no process of rank " +
                        std::to_string(*options.rank) +
                        " (process_rank; `prof-analyze ranks` lists them)",
                    kExitCapture);
      }
    }
    analyzer::ExportFile out(options.output, options.files);
    progress.stage("writing " + options.output);
    analyzer::write_chrome_trace(out.stream(), *readers.front(), trace);
    out.commit();
    return kExitOk;
  }

  std::vector<analyzer::ExportRun> runs;
  const char* labels[] = {"A", "B"};
  for (std::size_t i = 0; i < readers.size(); ++i) {
    runs.push_back(analyzer::load_export_run(
        *readers[i], labels[i], kernel_names, *format == analyzer::ExportFormat::Html,
        comparison ? &*comparison : nullptr, &windows[i], frames, &stored[i]));
    runs.back().window = window_text(windows[i]);
    if (runs.back().analyses && !windows[i].whole) {
      runs.back().analyses->ranks = std::move(ranks[i]);
      runs.back().analyses->ranks_note = ranks_notes[i];
    }
  }
  // A report section turns an error into a note; a capture whose timestamps fail the check
  // where a section read them is refused all the same, before the output is written.
  for (const auto& reader : readers) {
    if (!reader->deferred_check_failure().empty()) {
      return fail(reader->deferred_check_failure(), kExitCapture);
    }
  }
  analyzer::ExportFile out(options.output, options.files);
  progress.stage("writing " + options.output);
  switch (*format) {
    case analyzer::ExportFormat::Html: {
      analyzer::HtmlReportOptions html;
      html.generator = kGenerator;
      analyzer::make_html_report(runs, html).write(out.stream());
      break;
    }
    case analyzer::ExportFormat::Json:
      analyzer::write_export_json(out.stream(), runs);
      break;
    case analyzer::ExportFormat::Csv:
      analyzer::write_export_csv(out.stream(), runs);
      break;
    case analyzer::ExportFormat::ChromeTrace:
      break;
  }
  out.commit();
  return kExitOk;
}

}  // namespace

Runner add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  auto* command = add_command(
      app, "export",
      "Write a capture as a self-contained HTML report, JSON or CSV of every analysis, or a "
      "Chrome trace for Perfetto / chrome://tracing; two captures make a side-by-side report");
  command
      ->add_option("FILE", options->files,
                   "Capture written by prof-run, and optionally a "
                   "second one (FILE2) to show side by side")
      ->required()
      ->expected(1, 2);
  command->add_option("--format", options->format, "html, json, csv or chrome-trace")
      ->required()
      ->check(CLI::IsMember({"html", "json", "csv", "chrome-trace"}));
  command
      ->add_option("-o,--output", options->output,
                   "Output file (written as OUT.tmp, then renamed; gzip-compressed when it ends in "
                   ".gz, e.g. rank0.json.gz); '-' for standard output")
      ->required();
  add_names_option(command, options->names, "Kernel names: demangled, short or mangled");
  command
      ->add_option("--rank", options->rank,
                   "chrome-trace: only the processes of this rank (process_rank), for HTA's one "
                   "trace file per rank")
      ->check(CLI::Range(0, std::numeric_limits<std::int32_t>::max()));
  add_frames_option(command, options->frames);
  command->add_option("--baseline", options->baseline,
                      "With --candidate (html, json): glob of the baseline NVTX ranges of FILE, "
                      "e.g. 'swish/unfused/*'; replaces the unfused/fused auto-detection");
  command->add_option("--candidate", options->candidate,
                      "With --baseline: glob of the candidate NVTX ranges, paired by what the "
                      "wildcards matched");
  add_window_options(command, options->window, "");
  command->get_option("--window")->default_str("steady (all with --baseline/--candidate)");
  return [options] { return run_export(*options); };
}

}  // namespace fuselens::cli
