#pragma once
// SummaryStore: the summary's aggregates computed once when a capture is finalized and stored in
// it, so that `prof-analyze summary` answers without reading every kernel and launch call.
//
// What is stored (tables summary_source, summary_duration, summary_nvtx_work; db/schema.sql,
// version 4; summary_nvtx_process, version 10): the DurationStats of kernel durations per demangled
// name and of API-call durations per name (Nsight Systems' cuda_gpu_kern_sum and cuda_api_sum, the
// two tables that grow with every launch), and per ended NVTX range the kernels launched inside it
// and their GPU time (the projection of nvtx_gpu_proj_sum, see NvtxRow), by the range's own thread
// and by any thread of its process (the summary's default projection: without it stored, a summary
// of ten million kernels read every launch again, 5.5 s on the development machine). Everything
// else of the summary (copies, memsets, NVTX durations, device memory) is small and still read from
// the rows.
//
// The stored tables are a cache of the rows, never a replacement: summarize() uses them only while
// summary_source still describes the tables they came from (the same largest row id: rows are
// only ever appended, so a row added later changes it; one index lookup per table, and every
// ended NVTX range must have its stored projection), and only when every stored value is
// plausible (counts >= 1, 0 <= min <= median <= max < 2^62 ns, finite non-negative deviation,
// kernel and call counts that add up to the row counts recorded with them). Otherwise, and for
// captures written before version 4, it computes from the rows as before. Results are identical
// either way (tests/analyzer/SummaryStoreTest.cpp compares them on the committed H100 captures).
//
// Cost: on ten million kernels and launch calls (docs/BENCHMARKS.md, "Ten million kernels") the
// store takes what one live summary took, once, at the end of `prof-run`; a summary then reads
// a few hundred rows.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compare/CompareProjection.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Reader.h"
#include "store/PreparedStore.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

/// Duration statistics per string id (a kernel's demangled_name_id or a call's name_id), in
/// ascending id order.
using StatsById = std::vector<std::pair<std::int64_t, DurationStats>>;

/// Projected kernel work of one NVTX range (see NvtxRow::kernel_count and gpu_time_ns).
struct RangeWork {
  std::int64_t kernels = 0;
  std::int64_t gpu_ns = 0;
};

/// The aggregates summarize() can take from the capture instead of its rows.
struct StoredAggregates {
  StatsById kernels_by_demangled_name;
  /// By short_name_id (NameKind::Short); nullopt for a capture stored before them or damaged.
  std::optional<StatsById> kernels_by_short_name;
  StatsById api_by_name;
  std::unordered_map<std::int64_t, RangeWork> nvtx_work;  ///< by nvtx_range.id, ended ranges
  /// The Process projection of the same ranges (summary_nvtx_process); nullopt when the capture
  /// does not store it (written before the table, or damaged): summarize() computes it then.
  std::optional<std::unordered_map<std::int64_t, RangeWork>> nvtx_process;
};

/// Groups the rows of `rows`, (id, duration ns) ordered by id, into DurationStats per id; one
/// group's durations in memory at a time.
StatsById stats_by_id(db::Cursor<db::IdDuration>& rows);
/// DurationStats of the capture's kernels per short_name_id (NameKind::Short), in ascending id
/// order: one scan, every duration in memory (8 bytes a kernel). The caller checks the kernel
/// timestamps first.
StatsById stats_by_short_name(const db::Reader& reader);

/// The projected kernel work of every ended NVTX range of the capture, by range id, from the rows
/// (project_windows over kernel and api_call; their timestamps are checked first). The stored
/// aggregates hold both projections (summary_nvtx_work: Thread; summary_nvtx_process: Process).
std::unordered_map<std::int64_t, RangeWork> project_nvtx_ranges(
    const db::Reader& reader, NvtxProjection projection = NvtxProjection::Thread);

/// Both projections of project_nvtx_ranges, from one pass over the launches instead of two.
struct NvtxWorkBoth {
  std::unordered_map<std::int64_t, RangeWork> thread, process;
};
NvtxWorkBoth project_nvtx_ranges_both(const db::Reader& reader);

/// Computes the aggregates from the rows of the capture open in `reader` (which must have checked
/// or must check the kernel and api_call timestamps: this reads every row of both).
StoredAggregates compute_aggregates(const db::Reader& reader);

/// Computes the aggregates of the capture at `path` and stores them in it, replacing any stored
/// before, in one transaction. Throws db::Error when the file cannot be read or written (the
/// capture is then left as it was).
void store_summary_aggregates(const std::string& path);

/// The same through `reader`, whose connection must be ReadWrite (prof-run's finalization, which
/// opens the capture once); a reader built with TimestampCheck::DeferLargeTables has the kernel
/// and api_call timestamps checked here. Throws db::Error as above.
void store_summary_aggregates(db::Reader& reader);

/// Computes what store_summary_aggregates stores through a reader of its own on the capture at
/// `path` (TimestampCheck::DeferLargeTables: the times checked where read), for another thread
/// to store (PreparedStore.h). Throws db::Error when the capture cannot be read.
PreparedStore prepare_summary_aggregates(const std::string& path);
/// The same on `reader` (read only here; prof-run gives each thread a Reader::twin of one whose
/// kernel and api_call timestamps were checked, so that they are checked once).
PreparedStore prepare_summary_aggregates(const db::Reader& reader);

/// The stored aggregates of the capture, or nullopt when it has none, when they no longer match
/// its rows, or when a stored value is implausible (the caller then computes from the rows).
/// Throws db::Error only when a query fails.
std::optional<StoredAggregates> load_summary_aggregates(const db::Reader& reader);

}  // namespace fuselens::analyzer
