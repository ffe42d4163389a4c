// --window and the step-method options every analysing subcommand shares, and how its output
// names the window (docs/windows.md).

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "Cli.h"
#include "Color.h"
#include "ProgressLine.h"
#include "fuselens/db/AggregateStore.h"
#include "summary/SummaryFormat.h"

namespace fuselens::cli {
namespace {

// "x" as a CSV cell: the analyses' one CSV writer (RFC 4180 quoting, formulas neutralised).
std::string csv_cell(const std::string& text) { return analyzer::csv_field(text); }

// Appends a `window` column to every table of a CSV stream: a record that opens the stream or
// follows a blank or `#` comment line is a header. Quoted cells may hold line breaks.
std::string with_window_column(const std::string& csv, const std::string& label) {
  std::string out;
  out.reserve(csv.size() + csv.size() / 8);
  bool at_record_start = true, header_next = true, in_quotes = false, comment = false;
  std::size_t record_length = 0;
  for (const char c : csv) {
    if (at_record_start) {
      comment = c == '#';
      at_record_start = false;
      record_length = 0;
    }
    if (c == '\n' && !in_quotes) {
      if (comment || record_length == 0) {
        header_next = true;
      } else {
        out += header_next ? std::string(",window") : "," + csv_cell(label);
        header_next = false;
      }
      out += c;
      at_record_start = true;
      continue;
    }
    if (c == '"') in_quotes = !in_quotes;
    if (c != '\r') ++record_length;
    out += c;
  }
  return out;
}

}  // namespace

void add_window_options(CLI::App* command, WindowOptions& options,
                        const std::string& default_window) {
  options.default_window = default_window;
  command
      ->add_option("--window", options.window,
                   fmt::format("Part of the capture to describe: all, steady (the steps after "
                               "warm-up), steps:A-B, range:GLOB (NVTX ranges) or time:T0-T1 "
                               "(seconds from the capture's start); by default steady, or all on "
                               "a capture of more than {} GPU records (docs/windows.md)",
                               analyzer::kMaxSteadyDefaultRecords))
      ->default_str(default_window);
  command->add_option("--step-range", options.step_range,
                      "Steps are the NVTX ranges whose text matches GLOB (any case; outermost "
                      "per thread)");
  command->add_option("--step-function", options.step_function,
                      "Steps are delimited by calls of function NAME (a suffix at :: or .)");
  command->add_flag("--auto-steps", options.automatic,
                    "Steps from the period of the kernel sequence in launch order");
}

int parse_window_options(const WindowOptions& options, analyzer::WindowSpec& spec,
                         analyzer::StepOptions& steps) {
  const int methods = (options.step_range.empty() ? 0 : 1) +
                      (options.step_function.empty() ? 0 : 1) + (options.automatic ? 1 : 0);
  if (methods > 1) {
    return fail("choose one of --step-range, --step-function and --auto-steps", kExitUsage);
  }
  try {
    spec = options.window ? analyzer::parse_window(*options.window)
                          : analyzer::default_window(options.default_window);
  } catch (const analyzer::WindowError& e) {
    return fail(e.what(), kExitUsage);
  }
  if (!options.step_range.empty()) steps.range_glob = options.step_range;
  if (!options.step_function.empty()) steps.function = options.step_function;
  steps.automatic = options.automatic;
  return kExitOk;
}

void note_aggregate_capture(const db::Reader& reader, bool reads_aggregates) {
  if (db::has_aggregates(reader)) {
    tools::ProgressLine::erase_open_line();
    const auto trace = db::trace_windows(reader);
    std::cerr << tools::diagnostic_prefix("prof-analyze", tools::Tone::Note);
    if (reads_aggregates) {
      std::cerr << "aggregate capture (docs/aggregate.md): the whole run's statistics; "
                   "--window reads the trace of its "
                << trace.windows << " capture window(s) instead\n";
    } else if (trace.traced == 0) {
      std::cerr << "aggregate capture (docs/aggregate.md): this analysis needs a trace and "
                   "the capture holds none (no capture window was recorded); summary and cct "
                   "show the whole run\n";
    } else {
      std::cerr << "aggregate capture (docs/aggregate.md): this analysis needs a trace; it "
                   "shows the trace of the "
                << trace.windows << " capture window(s) (" << trace.reasons << "; " << trace.traced
                << " records), not the whole run\n";
    }
  }
}

int open_window(db::Reader& reader, const analyzer::WindowSpec& spec,
                const analyzer::StepOptions& steps, analyzer::Window& window,
                const std::function<void(const analyzer::Window&)>& before_restrict,
                bool reads_aggregates) {
  note_aggregate_capture(reader, reads_aggregates);
  // The step search reads every launch: their timestamps are checked first. Not when the steps
  // prof-run stored answer the window (the default method; a ten-million-kernel check costs
  // 2.5 s of CPU), nor for a time window, which searches no steps; the rows an analysis or the
  // window's own selection reads are checked as they are read (Reader.h), a narrow window's
  // through its views: only its rows (db/src/Window.cpp).
  const bool steps_window = spec.kind == analyzer::WindowKind::Steady ||
                            spec.kind == analyzer::WindowKind::Steps;
  const bool default_method = !steps.range_glob && !steps.function && !steps.automatic;
  const bool stored_steps =
      steps_window && default_method && analyzer::stored_step_report(reader).has_value();
  const bool searches_steps =
      (steps_window && !stored_steps) || spec.kind == analyzer::WindowKind::Range;
  if (searches_steps) {
    reader.check_table_timestamps("kernel");
    reader.check_table_timestamps("api_call");
  }
  try {
    window = analyzer::resolve_window(reader, spec, steps);
    if (before_restrict) before_restrict(window);
    analyzer::apply_window(reader, window);
  } catch (const analyzer::WindowError& e) {
    return fail("'" + reader.path() + "': " + e.what(), kExitWindow);
  } catch (const analyzer::StepError& e) {
    return fail("'" + reader.path() + "': " + e.what(), kExitWindow);
  }
  return kExitOk;
}

void write_windowed(std::ostream& out, const std::string& text, analyzer::OutputFormat format,
                    const std::vector<const analyzer::Window*>& windows) {
  tools::ProgressLine::erase_open_line();  // the analysis starts on a clean terminal line
  std::string label, description;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const char* side = windows.size() == 2 ? (i == 0 ? "baseline: " : "candidate: ") : "";
    label += (i ? "; " : "") + std::string(side) + windows[i]->label;
    description += (i ? "; " : "") + std::string(side) + windows[i]->description;
  }
  // A sampled capture (prof-run --sample) says so in every output: a line under the window's.
  std::string sampled, sampled_csv;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (!windows[i]->sampling) continue;
    const char* side = windows.size() == 2 ? (i == 0 ? "baseline " : "candidate ") : "";
    const std::string line = side + analyzer::sampling_line(*windows[i]->sampling) + "\n";
    sampled += line;
    sampled_csv += "# " + line;  // a comment line, as the CSV tables use them
  }
  switch (format) {
    case analyzer::OutputFormat::Table:
      out << "Window: " << description << "\n" << sampled << "\n" << text;
      return;
    case analyzer::OutputFormat::Csv:
      out << sampled_csv << with_window_column(text, label);
      return;
    case analyzer::OutputFormat::Json: {
      auto doc = nlohmann::json::parse(text);
      nlohmann::json list = nlohmann::json::array();
      for (const auto* w : windows) {
        nlohmann::json j{{"spec", w->spec.text},          {"label", w->label},
                         {"description", w->description}, {"whole", w->whole},
                         {"captured_ns", w->captured_ns}, {"inside_ns", w->inside_ns},
                         {"startup_ns", w->startup_ns}};
        if (w->first_step > 0) {
          j["first_step"] = w->first_step;
          j["last_step"] = w->last_step;
          j["step_count"] = w->steps ? w->steps->steps.size() : 0;
        }
        nlohmann::json spans = nlohmann::json::array();
        for (const auto& i : w->intervals) spans.push_back({i.start_ns, i.end_ns});
        j["intervals_ns"] = std::move(spans);
        if (w->sampling) {
          const auto& sm = *w->sampling;
          j["sampling"] = {{"line", analyzer::sampling_line(sm)},
                           {"every", sm.every},
                           {"mixed", sm.mixed},
                           {"processes", sm.processes},
                           {"steps", sm.steps},
                           {"steps_lost", sm.steps_lost},
                           {"traced_steps", sm.traced_steps},
                           {"launch_calls", sm.calls},
                           {"traced_launch_calls", sm.traced_calls},
                           {"scale", sm.scale}};
        }
        list.push_back(std::move(j));
      }
      nlohmann::json window = list.size() == 1 ? list[0] : list;
      if (doc.is_object()) {
        doc["window"] = std::move(window);
      } else {
        doc = nlohmann::json{{"window", std::move(window)}, {"rows", std::move(doc)}};
      }
      out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return;
    }
  }
}

}  // namespace fuselens::cli
