// finalize_capture (FinalizeCapture.h): what prof-run does to a capture once the workload ended.

#include "FinalizeCapture.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
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
#include "fuselens/db/CaptureIndexes.h"
#include "fuselens/db/Cursor.h"
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

// The index builds so far and whether the steps are stored, for the results that wait for them
// (IndexGate::wait).
class IndexGate {
 public:
  void built(std::string_view name) {
    {
      std::lock_guard lock(mutex_);
      built_.emplace(name);
    }
    changed_.notify_all();
  }
  // No more index will be built (all were, or a build failed).
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }
  // Waits until every name of `names` is built (true) or the gate closes without them (false).
  bool wait(const std::vector<std::string_view>& names) {
    std::unique_lock lock(mutex_);
    const auto all_built = [&] {
      return std::all_of(names.begin(), names.end(),
                         [&](std::string_view n) { return built_.find(n) != built_.end(); });
    };
    changed_.wait(lock, [&] { return closed_ || all_built(); });
    return all_built();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::string, std::less<>> built_;
  bool closed_ = false;
};

// The name of the gate's milestone "the steps are stored (or will not be)": the default window of
// cct and flags may be the steady steps.
constexpr std::string_view kStepsStored = "steps stored";
// The milestone "the kernel and api_call timestamps are checked and the capture's extent stored
// (or any of them failed)": the results after the steps read through twins of the readers that
// checked them (Reader::twin, take_checks), which then do not scan those two tables again each,
// and resolve their window from the stored extent (db::stored_capture_extent) instead of four
// tables each.
constexpr std::string_view kExtentStored = "timestamps checked, extent stored";
// What the results wait for: the steps (their default window may be the steady steps) and the
// check; the summary's aggregates also the indexes they read (CaptureIndexes.cpp builds them
// first): without api_by_correlation their computation joins each kernel's call by a scan of
// every call.
const std::vector<std::string_view> kResultWaits = {kStepsStored, kExtentStored};
const std::vector<std::string_view> kSummaryWaits = {
    kStepsStored, kExtentStored, "api_by_correlation", "kernel_by_name", "api_by_name"};

// One result stored at the end of the run, computed on a thread and connection of its own.
struct PendingResult {
  std::string what;        // for the progress line and the report
  std::string not_stored;  // the report's line when it could not be computed or stored
  std::vector<std::string_view> waits;  // index names (or kStepsStored) waited for (IndexGate)
  std::function<void()> compute;
  std::string error;
  double seconds = 0;
  std::atomic<bool> done = false;  // compute returned (set last)
};

// Builds the capture's indexes from the `from`th on, each its own transaction, until `until`
// (included) when it is not empty; calls `between` (when set) before each. Returns the position
// after the last one built.
std::size_t build_indexes(fuselens::db::Connection& connection, std::size_t from,
                          std::string_view until, IndexGate& gate,
                          fuselens::tools::FinalizeProgressPrinter& progress,
                          const std::function<void()>& between = {}) {
  namespace db = fuselens::db;
  const auto count = db::capture_index_count();
  std::size_t i = from;
  for (; i < count; ++i) {
    if (between) between();
    const db::IndexDefinition& index = db::capture_index(i);
    progress.step(std::string("index ") + index.name, static_cast<int>(i) + 1,
                  static_cast<int>(count));
    db::in_transaction(connection, [&] { db::create_capture_index(connection, index); });
    gate.built(index.name);
    if (until == index.name) return i + 1;
  }
  return i;
}

// Calls `compute` with a reader from `make` that reads a lean capture's kernels and calls in the
// order they were written where a cursor asks for correlation or start order
// (Reader::read_lean_by_id): a run's rows mostly come in that order, and without an index SQLite
// sorts ten million rows for each such read. When they do not (OrderBroken), calls it again with
// a reader from `make` that sorts, and says so in `what` (the breakdown's entry). `broken` is
// shared by the results of one finalization: once the order broke for one, the others sort at
// once rather than read part of the rows in vain.
template <typename Make, typename Compute>
void compute_by_id(const Make& make, const Compute& compute, std::string& what,
                   std::atomic<bool>& broken) {
  if (!broken.load()) {
    try {
      fuselens::db::Reader by_id = make();
      by_id.read_lean_by_id(true);
      compute(by_id);
      return;
    } catch (const fuselens::db::OrderBroken&) {
      broken = true;
      what += " (rows out of order: sorted)";
    }
  }
  fuselens::db::Reader sorted = make();
  compute(sorted);
}

// Runs `r` (after what it waits for), timing it and keeping its error.
void run_pending(PendingResult& r, IndexGate& gate) {
  if (!r.waits.empty() && !gate.wait(r.waits)) {
    r.error = "an index build failed";
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  try {
    r.compute();
  } catch (const std::exception& e) {
    r.error = e.what();
  } catch (...) {
    r.error = "unknown error";
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.done = true;
}

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

// The steps (docs/steps.md: the default window of cct and flags may be the steady steps), the
// summary's aggregates (SummaryStore.h: `summary` reads them instead of every row), the results of
// cct and flags for the default window (AnalysisStore.h; above the limits' record bound cct only
// when its groups stream, flags when memory allows: analyzer::flags_fit) with the extent every
// window's resolution reads, and the timeline's level of detail (TimelineLod.h: prof-gui opens a
// big capture without reading every kernel). Each is optional: without it the analysis reads the
// rows. They read the capture and nothing else, so they are computed at once, each on its own
// read-only connection, while this thread builds the indexes from the `next_index`th on through
// `reader`'s connection (WAL mode: db::begin_finalize; `gate` knows those built before) and
// stores the steps between two index builds once they are found. The others wait for them; the
// summary's aggregates wait for their indexes too (kSummaryWaits); steps, cct, flags and the
// level of detail read no index (on a million kernels without indexes they took 1.3-1.5× their
// time). On ten million launches the indexes alone took 35-39 s, flags 22.5 s, cct 12.8 s: one
// after the other 61-64 s, beside each other 42-45 s (docs/BENCHMARKS.md, session l). Then the
// results are stored one after another through `reader`.
void store_results_while_indexing(const std::string& path, fuselens::db::Reader& reader,
                                  std::size_t next_index, IndexGate& gate,
                                  fuselens::tools::FinalizeProgressPrinter& progress,
                                  const StoreLimits& limits) {
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
  std::atomic<bool> order_broken = false;  // compute_by_id
  analyzer::PreparedSteps steps;
  analyzer::PreparedStore summary, lod;
  std::vector<fuselens::db::StoredAnalysisRow> analyses;
  std::optional<fuselens::db::StoredAnalysisRow> flags_row;
  std::vector<PendingResult> results(flags ? 8 : 7);
  PendingResult& found_steps = results[0];
  found_steps.what = "steps";
  found_steps.compute = [&] {
    compute_by_id(
        [&] { return fuselens::db::Reader(path, fuselens::db::TimestampCheck::DeferLargeTables); },
        [&](const fuselens::db::Reader& r) { steps = analyzer::prepare_steps(r); },
        found_steps.what, order_broken);
  };
  // The kernel and the api_call timestamps checked once and the extent computed, each on a
  // reader of its own at once (a scan of ten million rows each: on a lean capture 4-5 s apiece),
  // the extent stored like the steps once all three are done (the others wait: kExtentStored).
  // On a failed check the others fail as it did, in their own reads.
  std::optional<fuselens::db::Reader> kernels_checked, calls_checked;
  const auto check = [&](std::optional<fuselens::db::Reader>& checked, const char* table) {
    checked.emplace(path, fuselens::db::TimestampCheck::DeferLargeTables);
    checked->check_table_timestamps(table);
  };
  analyzer::PreparedStore extent;
  PendingResult* const checks[] = {&results[1], &results[2], &results[3]};
  results[1].what = "kernel timestamps";
  results[1].compute = [&] { check(kernels_checked, "kernel"); };
  results[2].what = "call timestamps";
  results[2].compute = [&] { check(calls_checked, "api_call"); };
  results[3].what = "extent";
  results[3].compute = [&] {
    extent = analyzer::prepare_extent(
        fuselens::db::Reader(path, fuselens::db::TimestampCheck::DeferLargeTables));
  };
  // A reader for one result: a twin of the checks' readers (their checks counted, a failed one
  // failing again), or when they could not be opened one of its own (which fails the same way).
  const auto result_reader = [&] {
    if (!kernels_checked) {
      return fuselens::db::Reader(path, fuselens::db::TimestampCheck::DeferLargeTables);
    }
    fuselens::db::Reader twin = kernels_checked->twin();
    if (calls_checked) twin.take_checks(*calls_checked);
    return twin;
  };
  // A result that waits for `waits` and computes through a reader from result_reader (read by id
  // where it holds: compute_by_id).
  const auto define = [&](PendingResult& r, const char* what, const char* not_stored,
                          const std::vector<std::string_view>& waits,
                          std::function<void(fuselens::db::Reader&)> compute) {
    r.what = what;
    r.not_stored = not_stored;
    r.waits = waits;
    r.compute = [&result_reader, &r, &order_broken, compute = std::move(compute)] {
      compute_by_id(result_reader, compute, r.what, order_broken);
    };
  };
  define(results[4], "summary aggregates",
         "summary aggregates not stored (the summary will read every row)", kSummaryWaits,
         [&](fuselens::db::Reader& r) { summary = analyzer::prepare_summary_aggregates(r); });
  PendingResult& cct_result = results[5];
  define(cct_result, "capture extent and cct", "cct results not stored (cct will read every row)",
         kResultWaits, [&](fuselens::db::Reader& r) {
           analyses = analyzer::compute_analysis_rows(r, bounded, /*flags=*/false);
         });
  define(results[6], "timeline level of detail", "timeline level of detail not stored",
         kResultWaits, [&](fuselens::db::Reader& r) { lod = analyzer::prepare_timeline_lod(r); });
  if (flags) {
    define(results[7], "flags", "flags results not stored (flags will read every row)",
           kResultWaits,
           [&](fuselens::db::Reader& r) { flags_row = analyzer::compute_flags_row(r); });
  }
  // The steps, stored through `reader` once found (the others wait for this).
  bool steps_stored = false;
  const auto store_steps = [&] {
    if (steps_stored) return;
    steps_stored = true;
    std::string not_stored = found_steps.error;
    if (steps) {
      try {
        not_stored = steps(reader);
      } catch (const std::exception& e) {
        not_stored = e.what();
      }
    }
    if (!not_stored.empty()) {
      progress.done();
      std::cerr << "[fuselens] steps not stored: " << not_stored << '\n';
    }
    gate.built(kStepsStored);
  };
  // The extent, stored through `reader` once computed (a failure leaves the others to the rows).
  bool extent_stored = false;
  const auto store_extent = [&] {
    if (extent_stored) return;
    extent_stored = true;
    if (extent) {
      try {
        extent(reader);
      } catch (const std::exception& e) {
        progress.done();
        std::cerr << "[fuselens] capture extent not stored: " << e.what() << '\n';
      }
    }
    gate.built(kExtentStored);
  };
  // One slot a result, sized before any thread runs (no allocation then: a throw would leave one
  // unjoined); a slot left without a thread (none to be had) is computed here.
  std::vector<std::thread> threads(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    try {
      threads[i] = std::thread([&r = results[i], &gate] { run_pending(r, gate); });
    } catch (const std::system_error&) {
    }
  }
  std::exception_ptr index_failure;
  try {
    build_indexes(reader.connection(), next_index, {}, gate, progress, [&] {
      if (std::all_of(std::begin(checks), std::end(checks),
                      [](const PendingResult* r) { return r->done.load(); })) {
        store_extent();
      }
      if (found_steps.done) store_steps();
    });
  } catch (...) {
    index_failure = std::current_exception();
  }
  progress.step("results: summary aggregates, cct and flags, timeline level of detail", 0, 0);
  // What the others wait for, the checks, the extent and the steps, joined (or run here) and
  // stored.
  const auto finish = [&](PendingResult& r, std::thread& t) {
    if (t.joinable()) {
      t.join();
    } else {
      run_pending(r, gate);
    }
  };
  if (!index_failure) {
    for (std::size_t i = 1; i <= 3; ++i) finish(results[i], threads[i]);
    store_extent();
    finish(found_steps, threads[0]);
    store_steps();
  }
  gate.close();
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
  if (index_failure) std::rethrow_exception(index_failure);
  for (auto& r : results) {
    if (!r.done) run_pending(r, gate);  // those that had no thread
  }
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
  for (const auto& r : results) {  // the steps' own error was said when they were stored
    if (!r.error.empty() && !r.not_stored.empty()) errors.push_back(r.not_stored + ": " + r.error);
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
  if (!bounded || !cct_result.error.empty()) return;
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
    // In WAL mode throughout, so that the results are computed on other connections while the
    // indexes are built; the run's end is written last (db::begin_finalize, end_finalize).
    progress.step("checkpoint", 0, 0);
    db::begin_finalize(connection);
    IndexGate gate;  // the indexes built, for the results that wait for some
    // GPU work launched outside every capture window but run inside one (WindowEdges.h): it finds
    // each record's call through api_by_correlation, built first.
    std::size_t next_index = build_indexes(connection, 0, "api_by_correlation", gate, progress);
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
    // The steps of the run (docs/steps.md), stored for SQL and DataFrame users, and the results.
    if (reader) {
      store_results_while_indexing(path, *reader, next_index, gate, progress, limits);
    } else {
      // The capture failed validation: its indexes and its end all the same.
      db::Connection rest(path, db::Connection::Mode::ReadWrite);
      build_indexes(rest, next_index, {}, gate, progress);
      progress.step("journal", 0, 0);
      db::end_finalize(rest, end);
    }
    if (reader) {
      progress.step("journal", 0, 0);
      db::end_finalize(reader->connection(), end);
    }
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
