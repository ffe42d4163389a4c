// finalize_capture (FinalizeCapture.h): what prof-run does to a capture once the workload ended.

#include "FinalizeCapture.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "CaptureReport.h"
#include "Color.h"
#include "FinalizeProgress.h"
#include "ProgressLine.h"
#include "RooflineSteps.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/WindowEdges.h"
#include "fuselens/db/Writer.h"
#include "steps/Steps.h"
#include "store/AnalysisStore.h"
#include "summary/SummaryFormat.h"
#include "summary/SummaryStore.h"
#include "timeline/TimelineLod.h"

namespace fuselens::tools {

namespace {

namespace analyzer = fuselens::analyzer;

// One result stored at the end of the run, computed on a thread and connection of its own.
struct PendingResult {
  const char* what = "";   // for the progress line and the report
  std::string not_stored;  // the report's line when it could not be computed or stored
  std::function<void()> compute;
  std::string error;
  double seconds = 0;
};

// MemAvailable of /proc/meminfo in bytes, or nullopt where it cannot be read.
std::optional<std::int64_t> available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    constexpr std::string_view kKey = "MemAvailable:";
    if (line.rfind(kKey, 0) != 0) continue;
    std::istringstream fields(line.substr(kKey.size()));
    std::int64_t kb = -1;
    std::string unit;
    if (fields >> kb >> unit && unit == "kB" && kb >= 0 &&
        kb < std::numeric_limits<std::int64_t>::max() / 1024) {
      return kb * 1024;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The summary's aggregates (SummaryStore.h: `summary` reads them instead of every row), the
// results of cct and flags for the default window (AnalysisStore.h; above the limits' record
// bound cct only when its groups stream, flags when memory allows: analyzer::flags_fit) with the
// extent every window's resolution reads, and the timeline's level of detail (TimelineLod.h:
// prof-gui opens a big capture without reading every kernel). Each is optional: without it the
// analysis reads the rows. They read the capture and nothing else, so they are computed at
// once, each on its own read-only connection (flags apart from cct: on ten million launches on the
// H100's host flags took 22.5 s, cct 12.8 s), then stored one after another through `reader`.
void store_results(const std::string& path, fuselens::db::Reader& reader,
                   fuselens::tools::FinalizeProgressPrinter& progress, const StoreLimits& limits) {
  std::int64_t records = 0;
  try {
    records = reader.gpu_record_count();
  } catch (const std::exception&) {
    records = std::numeric_limits<std::int64_t>::max();  // then only the bounded results
  }
  const bool bounded = records > limits.in_memory_records;
  const std::optional<std::int64_t> memory =
      limits.available_bytes ? limits.available_bytes : available_memory();
  const bool flags = analyzer::flags_fit(records, memory, limits.in_memory_records);
  analyzer::PreparedStore summary, lod;
  std::vector<fuselens::db::StoredAnalysisRow> analyses;
  std::optional<fuselens::db::StoredAnalysisRow> flags_row;
  std::vector<PendingResult> results(flags ? 4 : 3);
  results[0].what = "summary aggregates";
  results[0].not_stored = "summary aggregates not stored (the summary will read every row)";
  results[0].compute = [&] { summary = analyzer::prepare_summary_aggregates(path); };
  results[1].what = "capture extent and cct";
  results[1].not_stored = "cct results not stored (cct will read every row)";
  results[1].compute = [&] {
    analyses = analyzer::compute_analysis_rows(path, bounded, /*flags=*/false);
  };
  results[2].what = "timeline level of detail";
  results[2].not_stored = "timeline level of detail not stored";
  results[2].compute = [&] { lod = analyzer::prepare_timeline_lod(path); };
  if (flags) {
    results[3].what = "flags";
    results[3].not_stored = "flags results not stored (flags will read every row)";
    results[3].compute = [&] { flags_row = analyzer::compute_flags_row(path); };
  }
  progress.step("results: summary aggregates, cct and flags, timeline level of detail", 0, 0);
  std::vector<std::thread> threads;
  threads.reserve(
      results.size());  // no allocation once a thread runs: a throw would leave it unjoined
  for (auto& r : results) {
    const auto compute = [&r] {
      const auto started = std::chrono::steady_clock::now();
      try {
        r.compute();
      } catch (const std::exception& e) {
        r.error = e.what();
      } catch (...) {
        r.error = "unknown error";
      }
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    try {
      threads.emplace_back(compute);
    } catch (const std::system_error&) {
      compute();  // no thread to be had: here, after the others
    }
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) progress.part(r.what, r.seconds);
  const bool has_cct =
      std::any_of(analyses.begin(), analyses.end(),
                  [](const fuselens::db::StoredAnalysisRow& r) { return r.analysis == "cct"; });
  if (flags_row) analyses.push_back(std::move(*flags_row));
  struct Store {
    const char* what;
    const char* not_stored;
    analyzer::PreparedStore store;
  };
  Store stores[] = {
      {"summary aggregates", "summary aggregates not stored (the summary will read every row)",
       std::move(summary)},
      {"cct and flags", "cct and flags results not stored (they will read every row)",
       analyses.empty() ? analyzer::PreparedStore() : analyzer::prepared_rows(std::move(analyses))},
      {"timeline level of detail", "timeline level of detail not stored", std::move(lod)}};
  std::vector<std::string> errors;
  for (const auto& r : results) {
    if (!r.error.empty()) errors.push_back(r.not_stored + ": " + r.error);
  }
  for (auto& s : stores) {
    if (!s.store) continue;
    progress.step(std::string("storing ") + s.what, 0, 0);
    try {
      s.store(reader);
    } catch (const std::exception& e) {
      errors.push_back(std::string(s.not_stored) + ": " + e.what());
    }
  }
  progress.done();
  for (const auto& e : errors) std::cerr << "[fuselens] " << e << '\n';
  if (!bounded || !results[1].error.empty()) return;
  // Above the record bound: what is left to the rows, and why.
  std::string left;
  if (!has_cct) left = "cct";
  if (!flags) left += left.empty() ? "flags" : " and flags";
  if (left.empty()) return;
  std::string why = fmt::format("{} GPU records, more than {}", records, limits.in_memory_records);
  if (!flags) {
    why += memory ? fmt::format(", and flags would hold about {} where {} are available",
                                analyzer::format_bytes(static_cast<double>(records) *
                                                       analyzer::kFlagsBytesPerRecord),
                                analyzer::format_bytes(static_cast<double>(*memory)))
                  : ", and the available memory is unknown";
  }
  std::cerr << fmt::format("[fuselens] {} results not stored: {} (they will read every row)\n",
                           left, why);
}

}  // namespace

bool finalize_capture(const std::string& path, const fuselens::db::RunEnd& end, bool metrics,
                      const StoreLimits& limits) {
  namespace db = fuselens::db;
  // Progress on stderr: rewritten in place on a terminal, nothing elsewhere (FinalizeProgress.h).
  const fuselens::tools::ProgressOptions progress_options =
      fuselens::tools::stderr_progress_options();
  fuselens::tools::FinalizeProgressPrinter progress(progress_options.enabled ? stderr : nullptr,
                                                    progress_options.terminal);
  const auto started = std::chrono::steady_clock::now();
  try {
    db::Connection connection(path, db::Connection::Mode::ReadWrite);
    db::finalize_capture(connection, end, [&](const db::FinalizeProgress& p) {
      progress.step(p.step, p.number, p.steps);
    });
    // GPU work launched outside every capture window but run inside one (WindowEdges.h).
    progress.step("window edges", 0, 0);
    const db::WindowEdgeRecords edges = db::leave_out_window_edge_records(connection);
    if (edges.total() > 0) {
      progress.done();
      std::cerr << "[fuselens] capture windows: left out " << edges.kernels << " kernels, "
                << edges.memcpys << " memcpys and " << edges.memsets
                << " memsets launched outside every window (docs/capture-control.md)\n";
    }
    // Deferred: the kernel and api_call timestamps are checked where they are read.
    std::optional<db::Reader> reader;
    try {
      reader.emplace(std::move(connection), db::TimestampCheck::DeferLargeTables);
    } catch (const std::exception& e) {
      progress.done();
      std::cerr << "[fuselens] results not stored (the analyses will read every row): " << e.what()
                << '\n';
    }
    // The steps of the run (docs/steps.md), stored for SQL and DataFrame users, first: the
    // stored cct/flags results are those of the default window, which may be the steady steps.
    if (reader) {
      try {
        progress.step("steps", 0, 0);
        const std::string skipped = fuselens::analyzer::store_steps(*reader);
        progress.done();
        if (!skipped.empty()) std::cerr << "[fuselens] steps not stored: " << skipped << '\n';
      } catch (const std::exception& e) {
        progress.done();
        std::cerr << "[fuselens] steps not stored: " << e.what() << '\n';
      }
    }
    if (reader) store_results(path, *reader, progress, limits);
    progress.done();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (seconds >= 2.0) {
      const std::string parts = progress.breakdown();
      std::cerr << fmt::format("[fuselens] finalized in {:.1f} s{}\n", seconds,
                               parts.empty() ? "" : " (" + parts + ")");
    }
    // A capture that failed validation above fails it again here, with the same message.
    if (!reader) reader.emplace(path, db::TimestampCheck::DeferLargeTables);
    std::cerr << "[fuselens] capture: " << path << '\n';
    std::cerr << "[fuselens] " << fuselens::collector::capture_report_line(*reader) << '\n';
    if (metrics) {
      std::cerr << "[fuselens] " << fuselens::collector::counters_report_line(*reader) << '\n';
    }
    return true;
  } catch (const std::exception& e) {
    progress.done();
    std::cerr << fuselens::tools::diagnostic_prefix("prof-run", fuselens::tools::Tone::Error)
              << "cannot finalize the capture '" << path << "': " << e.what() << '\n';
    return false;
  }
}

}  // namespace fuselens::tools
