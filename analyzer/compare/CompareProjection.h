#pragma once
// RangeProjection: the GPU work launched inside a time window on one CPU thread, the projection
// of NVTX ranges onto the GPU that Nsight Systems calls nvtx_gpu_proj_sum.
//
// A GPU activity record (kernel, memcpy or memset) is launched inside a range when its launching
// API call (the api_call of the same pid and correlation id; the earliest when several share it,
// e.g. a runtime call and the driver call inside it) ran on the range's (pid, tid) with
// range.start_ns <= call.start_ns <= range.end_ns. Records whose correlation id matches no API
// call are never inside any range. Nested ranges each count the record.
//
// Shared by Summary (NVTX rows), Compare (per-range GPU time, launches, bytes, GPU span) and the
// flags rules, so that every view projects ranges the same way.
//
// Units: ns for times and durations, bytes for sizes.
// Errors: db::Error when a query fails (a corrupt capture).

#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

/// Which activity table a RangeProjection sums.
enum class ProjectedActivity { Kernels, Memcpys, Memsets };

/// What was launched inside a window (see RangeProjection::inside).
struct ProjectedWork {
  std::int64_t records = 0;   ///< activity records (kernels, copies or memsets)
  std::int64_t launches = 0;  ///< distinct launching API calls (correlation ids) among them
  std::int64_t gpu_ns = 0;    ///< sum of the records' durations end_ns - start_ns
  std::int64_t bytes = 0;     ///< sum of bytes moved or set (0 for kernels)
};

/// Activity records grouped by their launching API call, sorted by (pid, tid, call start), with
/// running sums, so that the work launched in [start, end] on a thread costs two binary searches.
/// Building it reads the activity table and api_call once: O(n log n).
class RangeProjection {
 public:
  explicit RangeProjection(const db::Reader& reader,
                           ProjectedActivity activity = ProjectedActivity::Kernels);

  /// Work whose launching call ran on (pid, tid) and started in [start_ns, end_ns] (inclusive).
  ProjectedWork inside(std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                       std::int64_t end_ns) const;

 private:
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, tid, call start
  std::vector<Key> keys_;                  // [0] is a sentinel before every launch
  std::vector<ProjectedWork> prefix_{{}};  // [i]: sums over launches 1..i
};

/// The GPU span of a window: from the earliest start to the latest end of the GPU work (kernels,
/// copies and memsets together) launched inside it, the extent that Nsight Systems' projected
/// NVTX range (nvtx_gpu_proj_trace: projected start and end) reports, and what CUDA events
/// recorded around the launches measure when the GPU runs them back to back (launch gaps
/// included). Idle time between the records counts; overlap between streams counts once.
struct ProjectedSpan {
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t ns() const { return end_ns - start_ns; }
};

/// Launches of kernels, copies and memsets (the same launching-call rule as RangeProjection),
/// each with the earliest start and latest end of its records, sorted by (pid, tid, call start).
/// Building it reads the three activity tables and api_call once: O(n log n) time, 40 bytes per
/// launch kept. A query costs two binary searches and a scan of the launches inside the window.
class SpanProjection {
 public:
  explicit SpanProjection(const db::Reader& reader);

  /// Span of the work whose launching call ran on (pid, tid) and started in [start_ns, end_ns]
  /// (inclusive); nullopt when nothing was launched there.
  std::optional<ProjectedSpan> inside(std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                                      std::int64_t end_ns) const;

 private:
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, tid, call start
  std::vector<Key> keys_;
  std::vector<std::pair<std::int64_t, std::int64_t>> bounds_;  // [i]: earliest start, latest end
};

/// A window of one CPU thread: [start_ns, end_ns] inclusive on (pid, tid).
struct ProjectionWindow {
  std::int64_t pid = 0, tid = 0, start_ns = 0, end_ns = 0;
};

/// The work launched inside each of `windows` (result i for window i), the same figures as
/// RangeProjection(reader, activity).inside(...) for each window (an empty window, start after
/// end, gets zeros), computed in one streaming pass: the activity table and api_call are read
/// once each in (pid, correlation id) order and merged, and each launch is counted against the
/// windows' sorted bounds of its thread. Memory O(windows), not O(records): this is what
/// Summary uses for the NVTX rows of captures with millions of launches. Finalized captures have
/// covering indexes for both ordered reads (db::Writer::finalize); older ones are sorted by SQLite.
std::vector<ProjectedWork> project_windows(const db::Reader& reader, ProjectedActivity activity,
                                           const std::vector<ProjectionWindow>& windows);

}  // namespace fuselens::analyzer
