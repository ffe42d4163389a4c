#pragma once
// AnalysisStore: the results of `prof-analyze cct` and `prof-analyze flags` computed once when a
// capture is finalized and stored in it (tables stored_analysis and stored_analysis_source,
// db/schema.sql version 10; db/AnalysisStore.h), so that both answer on ten million kernels
// without reading every launch (issue 21; docs/BENCHMARKS.md, "Ten million kernels").
//
// What is stored, for the default window (`--window steady`, resolved on the steps prof-run
// stored just before; the whole capture when it has no steady steps):
//  - cct: the window's GPU operations grouped as cct::OperationGroup (same launch context,
//    label, graph placement and phase; costs summed), in the order of their first operation.
//    Every view, metric, phase filter, frames mode and display option of cct is computed from
//    these groups and the capture's frames and tree nodes, as from the operations one by one;
//  - flags: the report of the default configuration (every rule, default thresholds, short
//    kernel names, frames auto): its hits, verdict and window figures.
//  - the capture's extent (first start, last end of its GPU work and API calls), which every
//    window's resolution reads (db::stored_capture_extent; stored on its own when the run is too
//    large for the other two: store_extent);
//  - the work and GPU span of every ended NVTX range of the whole capture under the process
//    projection (project_ranges), which compare and the HTML report's variant heatmap read
//    (stored_range_projection; at any size: the pass streams, holding only the ranges).
// Other windows, step methods and flags options read the rows as before. Above
// kMaxStoredAnalysisRecords prof-run stores cct when it streams and flags when memory allows.
//
// The stored results are a cache, never a replacement: they are used only when every table they
// were computed from has the fingerprint it had (db::table_fingerprints: largest rowid, or row
// count), the window resolved now has the same key (label, description, extent, intervals), and
// the body parses with every value plausible (types, ranges, printable text, tree nodes that
// exist, sums that fit in 64 bits). Anything else, and captures written before version 10,
// computes from the rows. Results are identical either way (tests/analyzer/AnalysisStoreTest.cpp
// compares both paths' outputs on the committed captures and a synthetic one).
//
// Cost: storing runs what one `cct` and one `flags` run cost, once, at the end of `prof-run`;
// reading one costs a few index descents, the stored steps and a JSON parse of the body.
// Errors: db::Error from the capture (storing), WindowError/StepError when the default window
// cannot be resolved (storing); reading never throws for a damaged store (it answers nullopt).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cct/CallingContextData.h"
#include "compare/CompareProjection.h"
#include "flags/Flags.h"
#include "fuselens/db/AnalysisStore.h"
#include "fuselens/db/Reader.h"
#include "store/PreparedStore.h"
#include "window/Window.h"

namespace fuselens::analyzer {

/// The window results are stored for.
inline constexpr const char* kStoredWindowSpec = "steady";
/// The largest body read back (bytes); a larger one is ignored.
inline constexpr std::size_t kMaxStoredBodyBytes = 256u << 20;

/// The key of a resolved window: JSON of its spec text, label, description, extent, steps and
/// intervals. Two windows with the same key restrict a capture to the same rows.
std::string stored_window_key(const Window& window);

/// The most GPU records (kernels, copies, memsets) for which prof-run stores the results when a
/// run ends computed with every launch of the window in memory, as `cct` and `flags` read them
/// from the rows (measured in 2026-11: 5.4 GB peak and about 90 s of CPU at ten million launches,
/// the H100's launch_overhead capture taking 173 s to finish instead of 125 s); the same bound as
/// the stored steps (kMaxStoredStepRecords). Above it cct is stored when its groups stream and
/// flags when the memory allows (flags_fit); `synthetic_capture --store-aggregates` stores both at
/// any size.
inline constexpr std::int64_t kMaxStoredAnalysisRecords = 2'000'000;

/// Computes the results of the capture open read-write in `reader` (unrestricted; prof-run's
/// finalization connection, after the steps are stored) on a second read-only connection and
/// stores them through `reader`'s, replacing any stored before, in one transaction.
void store_analyses(db::Reader& reader);
/// The same for the capture at `path`.
void store_analyses(const std::string& path);
/// Stores only the capture's extent (db::kExtentAnalysis; store_analyses stores it too),
/// replacing any stored result: for a run above kMaxStoredAnalysisRecords, so that resolving a
/// window does not scan four tables (about 1.6 s of CPU on ten million kernels). Same arguments
/// and errors as store_analyses.
void store_extent(db::Reader& reader);
/// The extent's row as store_extent stores it, computed on `reader`, for another connection to
/// store (PreparedStore.h): prof-run stores it first, so that its other results resolve their
/// window from it instead of reading four tables each. Throws db::Error when a table cannot be
/// read or holds an implausible time.
PreparedStore prepare_extent(const db::Reader& reader);

/// For a run above kMaxStoredAnalysisRecords: stores the extent (as store_extent) and, when the
/// calling-context groups of the stored window stream in bounded memory
/// (cct::stream_operation_groups: no links between launches), the cct result, replacing any
/// stored result; flags are left to the rows (prof-run stores them too when memory allows:
/// flags_fit, compute_flags_row). Returns true when cct was stored. Same arguments
/// and errors as store_analyses.
bool store_bounded_analyses(db::Reader& reader);

/// Computes what store_analyses (`bounded` false) or store_bounded_analyses (true) stores, on a
/// reader of its own on the capture at `path`, for another thread to store (PreparedStore.h;
/// steps the stored window depends on must be stored first). `cct`, when given, is set to whether
/// the result holds cct. Throws db::Error when the capture cannot be read.
PreparedStore prepare_analyses(const std::string& path, bool bounded, bool* cct = nullptr);

/// The rows prepare_analyses computes (the extent, the range projections, cct as `bounded`
/// says), with the flags row only when `flags`; for prof-run, which computes flags on a thread of
/// its own (compute_flags_row) and stores every row together (prepared_rows: a store replaces
/// every stored result). Throws db::Error when the capture cannot be read.
std::vector<db::StoredAnalysisRow> compute_analysis_rows(const std::string& path, bool bounded,
                                                         bool flags);
/// The same on `reader`, an unrestricted reader that it restricts to the default window (a
/// Reader::twin of one whose kernel and api_call timestamps prof-run checked once).
std::vector<db::StoredAnalysisRow> compute_analysis_rows(db::Reader& reader, bool bounded,
                                                         bool flags);
/// The flags row of the default window of the capture at `path`, on a reader of its own; steps
/// the window depends on must be stored first. Holds every launch of the window in memory (about
/// kFlagsBytesPerRecord a GPU record). Throws db::Error when the capture cannot be read.
db::StoredAnalysisRow compute_flags_row(const std::string& path);
/// The same on `reader`, an unrestricted reader that it restricts to the default window.
db::StoredAnalysisRow compute_flags_row(db::Reader& reader);
/// Stores `rows` (replacing every stored result) as prepare_analyses' store does.
PreparedStore prepared_rows(std::vector<db::StoredAnalysisRow> rows);

/// The most memory flags hold per GPU record of the window, its launch call, call path and hit
/// instances included, bytes: measured 258 B on the synthetic ten-million-kernel capture
/// (`prof-analyze flags --window all`, 2.58 GB peak, 2026-11-28), with a margin.
inline constexpr std::int64_t kFlagsBytesPerRecord = 320;
/// Whether prof-run computes and stores the flags result of `records` GPU records when the run
/// ends: always up to `bound`; above it when records x kFlagsBytesPerRecord is at most half of
/// `available_bytes` (the system's available memory; nullopt when unknown: no).
bool flags_fit(std::int64_t records, std::optional<std::int64_t> available_bytes,
               std::int64_t bound = kMaxStoredAnalysisRecords);

/// The analysis name of the stored NVTX range projections (window spec and key "").
inline constexpr const char* kRangeProjectionAnalysis = "nvtx_ranges";

/// The stored_analysis row of the range projections of the capture open (unrestricted) in
/// `reader`: project_ranges under NvtxProjection::Process over range_instances' windows, as JSON
/// {"ranges": [[pid, tid, start_ns, end_ns, then records, launches, gpu_ns and bytes of kernels,
/// copies and memsets, has_span, span start_ns, span end_ns, process_kernels], ...]}. Throws
/// db::Error when a query fails.
db::StoredAnalysisRow range_projection_row(const db::Reader& reader);

/// The range projections stored when the run ended, when `reader` is unrestricted, the rows
/// they came from are unchanged (db::stored_analyses_fresh), the stored windows are `windows`
/// (the same ranges in the same order) and every value is plausible (non-negative, spans not
/// inverted, every column's sum within 64 bits); nullopt otherwise. Never throws for a damaged
/// row (db::Error only when SQLite itself fails).
std::optional<std::vector<ProjectedRange>> stored_range_projection(
    const db::Reader& reader, const std::vector<ProjectionWindow>& windows);

/// The window of the stored results when `spec` and `step_options` are those they answer (the
/// default steady window and step method), the capture holds stored results and stored steps,
/// and the window resolves on `reader` (unrestricted); else nullopt. Reads no launch.
std::optional<Window> stored_results_window(const db::Reader& reader, const WindowSpec& spec,
                                            const StepOptions& step_options);

/// The stored cct groups of `window` (from stored_results_window, `reader` unrestricted), or
/// nullopt when they are absent, stale or implausible.
std::optional<std::vector<cct::OperationGroup>> load_stored_cct(const db::Reader& reader,
                                                                const Window& window);

/// True when `config`, `names` and `frames` are those of the stored flags report.
bool stored_flags_config(const FlagsConfig& config, NameKind names, FramesMode frames);

/// The stored flags report of `window` (as load_stored_cct), with path set from `reader`, or
/// nullopt.
std::optional<FlagsReport> load_stored_flags(const db::Reader& reader, const Window& window);

}  // namespace fuselens::analyzer
