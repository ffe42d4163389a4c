#pragma once
// RangeProjection: the GPU work launched inside a time window of a CPU thread or of its whole
// process, the projection of NVTX ranges onto the GPU.
//
// A GPU activity record (kernel, memcpy or memset) is launched inside a range when its launching
// API call (the api_call of the same pid and correlation id; the earliest when several share it,
// e.g. a runtime call and the driver call inside it) started with
// range.start_ns <= call.start_ns <= range.end_ns and ran
//  - NvtxProjection::Process (the default): on any thread of the range's process. A training
//    step's range then holds its backward kernels, which PyTorch's autograd launches from its
//    own thread (issue 22);
//  - NvtxProjection::Thread: on the range's own (pid, tid), as Nsight Systems' nvtx_gpu_proj_sum
//    defines it (ANCHORS.md: "projects a range onto the GPU work launched by the same thread").
// Records whose correlation id matches no API call are never inside any range. Nested ranges
// each count the record. What the thread projection leaves out of a range is the process
// projection minus the thread projection (records launched inside its span by other threads).
//
// Shared by Summary (NVTX rows), Compare (per-range GPU time, launches, bytes, GPU span) and the
// flags rules, so that every view projects ranges the same way.
//
// Units: ns for times and durations, bytes for sizes.
// Errors: db::Error when a query fails (a corrupt capture).

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

/// Which launches count for a range: those of any thread of its process, or only of its thread.
enum class NvtxProjection { Process, Thread };

/// "process" or "thread".
const char* to_string(NvtxProjection projection);
/// Parses "process" or "thread"; nullopt for anything else.
std::optional<NvtxProjection> parse_nvtx_projection(std::string_view text);

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
                           ProjectedActivity activity = ProjectedActivity::Kernels,
                           NvtxProjection projection = NvtxProjection::Process);

  /// Work whose launching call ran on (pid, tid) (Thread) or on any thread of pid (Process) and
  /// started in [start_ns, end_ns] (inclusive).
  ProjectedWork inside(std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                       std::int64_t end_ns) const;

 private:
  using Key =
      std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, tid (0: Process), call start
  NvtxProjection projection_;
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
  explicit SpanProjection(const db::Reader& reader,
                          NvtxProjection projection = NvtxProjection::Process);

  /// Span of the work whose launching call ran on (pid, tid) (Thread) or any thread of pid
  /// (Process) and started in [start_ns, end_ns] (inclusive); nullopt when nothing was launched.
  std::optional<ProjectedSpan> inside(std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                                      std::int64_t end_ns) const;

 private:
  using Key =
      std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, tid (0: Process), call start
  NvtxProjection projection_;
  std::vector<Key> keys_;
  std::vector<std::pair<std::int64_t, std::int64_t>> bounds_;  // [i]: earliest start, latest end
};

/// A window of one CPU thread (or of its process, under NvtxProjection::Process): [start_ns,
/// end_ns] inclusive on (pid, tid).
struct ProjectionWindow {
  std::int64_t pid = 0, tid = 0, start_ns = 0, end_ns = 0;
};

/// The work launched inside each of `windows` (result i for window i), the same figures as
/// RangeProjection(reader, activity, projection).inside(...) for each window (an empty window,
/// start after end, gets zeros), computed in one streaming pass: the activity table and api_call
/// are read once each in (pid, correlation id) order and merged, and each launch is counted against
/// the windows' sorted bounds of its thread. Memory O(windows), not O(records): this is what
/// Summary uses for the NVTX rows of captures with millions of launches. Finalized captures have
/// covering indexes for both ordered reads (db::Writer::finalize); older ones are sorted by SQLite.
std::vector<ProjectedWork> project_windows(const db::Reader& reader, ProjectedActivity activity,
                                           const std::vector<ProjectionWindow>& windows,
                                           NvtxProjection projection = NvtxProjection::Process);

/// project_windows under both projections, from one pass over the launches instead of two.
struct ThreadAndProcessWork {
  std::vector<ProjectedWork> thread, process;  ///< [i]: window i
};
ThreadAndProcessWork project_windows_both(const db::Reader& reader, ProjectedActivity activity,
                                          const std::vector<ProjectionWindow>& windows);

/// Everything compare reads of one window, from project_ranges.
struct ProjectedRange {
  ProjectedWork kernels, copies, memsets;  ///< as RangeProjection(reader, activity).inside(...)
  std::optional<ProjectedSpan> span;       ///< as SpanProjection(reader).inside(...)
  /// The kernel records the Process projection counts in the window (kernels.records under
  /// Process; under Thread, what the thread projection leaves out is this minus kernels.records).
  std::int64_t process_kernels = 0;
};

/// The ended NVTX ranges compare and the HTML report measure (every ended range but FuseLens's
/// own, as the capture lists them): each one's group name ("domain:text", or text), its
/// iterations (an integer payload > 0, else 1) and its window.
struct RangeInstances {
  std::vector<std::string> groups;
  std::vector<std::int64_t> iterations;
  std::vector<ProjectionWindow> windows;
};
RangeInstances range_instances(const db::Reader& reader);

/// The work and GPU span launched inside each of `windows` (result i for window i): the figures
/// of RangeProjection for kernels, copies and memsets and of SpanProjection, computed in one pass
/// that streams the three activity tables together (db::gpu_spans_by_correlation) and api_call
/// in (pid, correlation id) order, holding the windows alone (memory O(windows), not O(records)).
/// Each launch is counted against the windows of its lane that hold its call start, found by a
/// sweep over the windows in start order (calls start in correlation order, which CUPTI hands out
/// at the calls' entry); a call that starts before the sweep's time is matched against every window
/// of its lane instead. Throws db::Error when a query fails.
std::vector<ProjectedRange> project_ranges(const db::Reader& reader,
                                           const std::vector<ProjectionWindow>& windows,
                                           NvtxProjection projection = NvtxProjection::Process);

}  // namespace fuselens::analyzer
