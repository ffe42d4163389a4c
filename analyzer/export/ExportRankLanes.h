#pragma once
// ExportRankLanes: the HTML report's compact timeline of a multi-process capture (issue 25):
// one lane per (rank, device) with the kernels of every stream of that rank on that device, NCCL
// kernels and peer-to-peer copies drawn in the communication colour, and above each rank's lanes
// its outermost NVTX ranges (the steps of a training loop), so a rank that starts its steps late
// (a straggler) and the long collectives of the ranks waiting for it are visible at a glance.
//
// Communication (as HTA's communication kernels and Nsight Systems' NCCL rows): a kernel whose
// short name starts with "nccl" (case-insensitive), or a memcpy of kind PeerToPeer.
// Only captures with process_rank rows (schema 8) get a strip; reads follow the reader's window
// (apply_window), so the strip covers the window. Bars narrower than the strip's resolution
// (kMaxBarsPerLane buckets across the span) are merged per kind, so a long capture stays small.
//
// Units: *_ns nanoseconds on CUPTI's clock. Errors: db::Error when a query fails.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

struct RankLaneBar {
  std::int64_t start_ns = 0, end_ns = 0;
  bool communication = false;
};

struct RankLane {
  std::int32_t rank = 0;  ///< -1: a process without a process_rank row (listed last)
  std::uint32_t pid = 0, device_id = 0;
  std::string title;              ///< "rank 1 · GPU 1", "pid 300 · GPU 0"
  std::vector<RankLaneBar> bars;  ///< by start, merged below the resolution
  std::int64_t kernels = 0, communication_kernels = 0;
  std::int64_t busy_ns = 0, communication_ns = 0;  ///< sums of kernel durations (not unions)
};

struct RankSteps {  ///< outermost NVTX ranges of one rank's processes
  std::int32_t rank = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  ///< (start, end), by start
};

struct RankLaneStrip {
  std::int64_t begin_ns = 0, end_ns = 0;  ///< span of every bar and range
  std::vector<RankLane> lanes;            ///< by (rank, device, pid); rank -1 last
  std::vector<RankSteps> steps;           ///< by rank; ranks with NVTX ranges only
};

inline constexpr std::size_t kMaxBarsPerLane = 1500;

// Communication kernels are ranks/Ranks.h's is_communication_kernel (one rule for the ranks
// analysis and these lanes).

/// The strip of the capture opened by `reader`; empty (no value) when it has no process_rank
/// rows or no kernels. O(kernels + copies + NVTX ranges) time.
std::optional<RankLaneStrip> load_rank_lane_strip(const db::Reader& reader);

/// The strip as inline SVG (class "chart"): a labelled row per lane, the step ranges of each
/// rank above its lanes, a time axis and a legend. Names are escaped.
std::string svg_rank_lanes(const RankLaneStrip& strip);

}  // namespace fuselens::analyzer
