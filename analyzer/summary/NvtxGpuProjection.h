#pragma once
// NvtxGpuProjection: NVTX ranges projected onto the GPU instance by instance, the figures of
// Nsight Systems' nvtx_gpu_proj_sum report (`prof-analyze summary --report nvtx_gpu_proj_sum`).
//
// For every ended NVTX range (FuseLens's own instrumentation ranges left out, as in the summary):
// the GPU work launched inside it (kernels, copies and memsets whose launching API call started
// in [start_ns, end_ns] on the range's thread, or on any thread of its process, under the
// NvtxProjection asked for: CompareProjection.h) and that work's projected span, from the
// earliest start to the latest end of those records (SpanProjection; Nsight Systems' projected
// range). Ranges with no GPU work launched inside them are not projected and not counted, as
// nvtx_gpu_proj_sum lists only projected ranges. Rows group the projected instances by name
// ("domain:text", or "text" in the default domain, as NvtxRow::name).
//
// Nesting: a range's level is the number of ranges of its thread that enclose it (0 =
// outermost) and its children are the ranges directly inside it on the same thread (ended ones;
// found by a stack over the thread's ranges in start order).
//
// Units: ns. Memory: one entry per ended range and SpanProjection's 40 bytes per launch.
// Errors: db::Error when a query fails (a corrupt capture).

#include <cstdint>
#include <string>
#include <vector>

#include "compare/CompareProjection.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

/// One row of nvtx_gpu_proj_sum.
struct NvtxGpuProjectionRow {
  std::string name;                 ///< "domain:text", or "text" in the default domain
  DurationStats projected;          ///< of the instances' projected spans; count = Range Instances
  std::int64_t range_total_ns = 0;  ///< sum of the projected instances' own (CPU) durations
  std::int64_t gpu_ops = 0;         ///< kernels + copies + memsets launched inside them
  double avg_level = 0;             ///< mean nesting level of the instances (0 = outermost)
  double avg_children = 0;          ///< mean number of ranges directly inside each instance
};

/// The rows, sorted by total projected time descending, then name.
std::vector<NvtxGpuProjectionRow> nvtx_gpu_projection(
    const db::Reader& reader, NvtxProjection projection = NvtxProjection::Process);

}  // namespace fuselens::analyzer
