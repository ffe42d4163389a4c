#pragma once
// NsysReports: the summary as Nsight Systems' `nsys stats` reports, so that scripts written for
// `nsys stats --report ... --format csv --output PREFIX` run on a FuseLens capture
// (`prof-analyze summary --report ... --format csv --output PREFIX`; docs/summary.md).
//
// Reports and their CSV columns (nsys's headers, nsys's column order):
//   cuda_gpu_kern_sum      Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),
//                          StdDev (ns),Name                       (Summary::kernels)
//   cuda_gpu_mem_time_sum  Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),
//                          StdDev (ns),Operation                  (Summary::memory_operations)
//   cuda_gpu_mem_size_sum  Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),
//                          Operation                              (MemoryOperationRow::size_stats;
//                          MB = 1e6 bytes, as nsys; rows by total size, descending)
//   cuda_api_sum           Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),
//                          Max (ns),StdDev (ns),Name              (Summary::api)
//   nvtx_sum               Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),
//                          StdDev (ns),Style,Range                (Summary::nvtx; Style is always
//                          "PushPop": captures do not record whether a range was push/pop or
//                          start/end)
//   nvtx_gpu_proj_sum      Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,
//                          Proj Avg (ns),Proj Med (ns),Proj Min (ns),Proj Max (ns),
//                          Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,Avg Range Lvl,Avg Num Child
//                          (NvtxGpuProjection.h, under the summary's NVTX projection: nsys's own
//                          rule is `--nvtx-projection thread`)
// Values: integers for counts and whole nanoseconds, one decimal for percentages, averages,
// medians and standard deviations, three decimals for MB, as nsys writes them; text fields
// through csv_field (RFC 4180). The summary's section names stay aliases of these reports:
// kernels, memops (both memory reports), api, nvtx (both NVTX reports), all; memory (the device
// memory table, which nsys has no report for) is FuseLens's own "device_memory_sum" with the
// summary's CSV columns.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "summary/NvtxGpuProjection.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

enum class NsysReport {
  KernSum,
  MemTimeSum,
  MemSizeSum,
  ApiSum,
  NvtxSum,
  NvtxGpuProjSum,
  DeviceMemorySum,  ///< FuseLens's device-memory table (no nsys counterpart)
};

/// The report's name: "cuda_gpu_kern_sum", ..., "device_memory_sum".
const char* to_string(NsysReport report);

/// The reports that `name` stands for: an nsys report name, or one of the summary's section
/// names (kernels, memops, api, nvtx, memory, all). Empty for an unknown name.
std::vector<NsysReport> reports_named(std::string_view name);

/// True when `name` is one of the nsys report names above (not a section alias).
bool is_nsys_report_name(std::string_view name);

/// Writes `report` of `summary` as CSV with nsys's header row. NvtxGpuProjSum needs
/// `projection` (nvtx_gpu_projection of the same reader); without it the report has no rows.
void write_nsys_csv(std::ostream& out, NsysReport report, const Summary& summary,
                    const std::vector<NvtxGpuProjectionRow>* projection = nullptr);

/// nsys's output file name of `report` under `prefix`: "<prefix>_<report>.csv".
std::string nsys_report_path(const std::string& prefix, NsysReport report);

}  // namespace fuselens::analyzer
