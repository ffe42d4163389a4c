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
// Shared by Summary (NVTX rows), Compare (per-range GPU time, launches, bytes) and the flags
// rules, so that every view projects ranges the same way.
//
// Units: ns for times and durations, bytes for sizes.
// Errors: db::Error when a query fails (a corrupt capture).

#include <cstdint>
#include <tuple>
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

}  // namespace fuselens::analyzer
