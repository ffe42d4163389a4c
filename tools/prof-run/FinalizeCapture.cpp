// finalize_capture (FinalizeCapture.h): what prof-run does to a capture once the workload ended.

#include "FinalizeCapture.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <utility>

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
#include "summary/SummaryStore.h"
#include "timeline/TimelineLod.h"

namespace fuselens::tools {

bool finalize_capture(const std::string& path, const fuselens::db::RunEnd& end, bool metrics) {
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
    // Deferred: the kernel and api_call timestamps are checked where they are read, once (by the
    // aggregates, or by the summary when they could not be stored).
    std::optional<db::Reader> reader;
    try {
      reader.emplace(std::move(connection), db::TimestampCheck::DeferLargeTables);
      // The summary's aggregates, computed once here instead of at every `prof-analyze summary`
      // (SummaryStore.h). Optional: without them the summary reads the rows.
      progress.step("summary aggregates", 0, 0);
      fuselens::analyzer::store_summary_aggregates(*reader);
    } catch (const std::exception& e) {
      progress.done();
      std::cerr << "[fuselens] summary aggregates not stored (the summary will read every row): "
                << e.what() << '\n';
    }
    // The steps of the run (docs/steps.md), stored for SQL and DataFrame users. Optional too.
    if (reader) {
      try {
        progress.step("steps", 0, 0);
        reader->check_table_timestamps("kernel");
        reader->check_table_timestamps("api_call");
        const std::string skipped = fuselens::analyzer::store_steps(*reader);
        progress.done();
        if (!skipped.empty()) std::cerr << "[fuselens] steps not stored: " << skipped << '\n';
      } catch (const std::exception& e) {
        progress.done();
        std::cerr << "[fuselens] steps not stored: " << e.what() << '\n';
      }
    }
    // The results of cct and flags for the default window (AnalysisStore.h). Optional too; above
    // kMaxStoredAnalysisRecords only what is computed in bounded memory (the extent every
    // window's resolution reads, and cct when its groups stream): flags hold every launch.
    if (reader) {
      try {
        const std::int64_t records = reader->gpu_record_count();
        if (records > fuselens::analyzer::kMaxStoredAnalysisRecords) {
          progress.step("capture extent and cct", 0, 0);
          const bool cct = fuselens::analyzer::store_bounded_analyses(*reader);
          progress.done();
          std::cerr << fmt::format(
              "[fuselens] {} results not stored: {} GPU records, more than {} (they will read "
              "every row)\n",
              cct ? "flags" : "cct and flags", records,
              fuselens::analyzer::kMaxStoredAnalysisRecords);
        } else {
          progress.step("cct and flags", 0, 0);
          fuselens::analyzer::store_analyses(*reader);
        }
        progress.done();
      } catch (const std::exception& e) {
        progress.done();
        std::cerr << "[fuselens] cct and flags results not stored (they will read every row): "
                  << e.what() << '\n';
      }
    }
    // The timeline's level of detail (analyzer/timeline/TimelineLod.h), so that prof-gui opens
    // a big capture without reading every kernel. Optional: without it prof-gui reads the rows.
    if (reader) {
      try {
        progress.step("timeline level of detail", 0, 0);
        fuselens::analyzer::store_timeline_lod(*reader);
        progress.done();
      } catch (const std::exception& e) {
        progress.done();
        std::cerr << "[fuselens] timeline level of detail not stored: " << e.what() << '\n';
      }
    }
    progress.done();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (seconds >= 2.0) std::cerr << fmt::format("[fuselens] finalized in {:.1f} s\n", seconds);
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
