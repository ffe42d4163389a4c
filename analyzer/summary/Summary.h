#pragma once
// Summary: the statistics tables of one FuseLens capture, as plain value structs.
//
// `summarize` reads a capture through db::Reader and computes the tables that Nsight Systems
// users know from `nsys stats` (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum / mem_size_sum,
// cuda_api_sum, nvtx_sum and nvtx_gpu_proj_sum), plus the device-memory high-water mark. The
// command-line tool (`prof-analyze summary`) and the GUI both call it; nothing here formats text
// (see SummaryFormat.h).
//
// Units: every *_ns value is nanoseconds (on CUPTI's timestamp clock for times, plain durations
// otherwise), every *bytes value is bytes, percentages are 0..100, throughput is GB/s with
// 1 GB = 1e9 bytes.
//
// Errors: db::Error when a query fails (a corrupt capture); opening and validating the file is
// db::Reader's job and throws db::Error from its constructor.

#include <cstdint>
#include <string>
#include <vector>

#include "compare/CompareProjection.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Strings.h"

namespace fuselens::analyzer {

/// Which of the three names a capture stores for each kernel is used to group kernels (db owns
/// the choice of column: db/Strings.h).
using NameKind = db::NameKind;

/// Statistics of a set of durations, in nanoseconds. The columns of every Nsight Systems
/// summary table: Instances, Total Time, Avg, Med, Min, Max, StdDev.
struct DurationStats {
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  double avg_ns = 0;     ///< total / count; 0 when empty
  double median_ns = 0;  ///< middle value; the mean of the two middle values for an even count
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double stddev_ns = 0;  ///< sample standard deviation (divides by n-1); 0 for fewer than 2 values
};

/// Computes DurationStats of `durations` (any order; the vector is reordered to select the median,
/// hence taken by value; O(n)). All fields are 0 for an empty vector.
DurationStats compute_stats(std::vector<std::int64_t> durations);

/// One row of the kernel summary (Nsight Systems' cuda_gpu_kern_sum).
struct KernelRow {
  std::string name;         ///< in the NameKind asked for
  double time_percent = 0;  ///< total_ns / (sum of total_ns over all kernel rows) * 100
  DurationStats stats;      ///< of kernel durations end_ns - start_ns; count = Instances
};

/// One row of the memory-operation summary (cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum
/// merged): "[CUDA memcpy Host-to-Device]" (one row per db::MemcpyKind, named with
/// db::to_string) or "[CUDA memset]".
struct MemoryOperationRow {
  std::string name;
  double time_percent = 0;  ///< share of the total time of all memory-operation rows
  DurationStats stats;      ///< of operation durations
  /// The same statistics of the operations' sizes (cuda_gpu_mem_size_sum): its *_ns fields hold
  /// bytes here (total_ns = total_bytes, saturated the same way).
  DurationStats size_stats;
  std::int64_t total_bytes = 0;
  double throughput_gb_per_s = 0;  ///< total_bytes / total_ns (bytes per ns = GB/s, 1 GB = 1e9 B)
};

/// One row of the API summary (cuda_api_sum): CUDA runtime and driver calls grouped by name.
struct ApiRow {
  std::string name;         ///< e.g. "cudaLaunchKernel"
  double time_percent = 0;  ///< share of the total time of all API rows
  DurationStats stats;      ///< of call durations; count = Num Calls
};

/// One row of the NVTX range summary (nvtx_sum) with its GPU projection (nvtx_gpu_proj_sum).
struct NvtxRow {
  std::string name;         ///< the range text, prefixed "domain:" when the domain is not empty
  double time_percent = 0;  ///< share of the total time of all NVTX rows (nested ranges overlap)
  DurationStats stats;      ///< of the durations of the ranges that ended
  std::int64_t unterminated = 0;  ///< ranges never ended (NULL end_ns), not in `stats`
  /// Kernels launched inside the ranges of this row and the sum of their GPU durations, under
  /// Summary::nvtx_projection (CompareProjection.h). A kernel is launched inside a range when
  /// its launching API call (the api_call of the same pid and correlation id; the earliest when
  /// several share it) started with range.start_ns <= call.start_ns <= range.end_ns on any
  /// thread of the range's process (Process, the default) or on the range's own (pid, tid)
  /// (Thread, nvtx_gpu_proj_sum's rule). Nested ranges each count the kernel.
  std::int64_t kernel_count = 0;
  std::int64_t gpu_time_ns = 0;
  /// Kernels launched inside the ranges' spans by other threads of their process: included by
  /// the Process projection, left out by the Thread one (process count - thread count).
  std::int64_t other_thread_kernels = 0;
  /// Kernels launched inside the ranges' spans that the projection did not count: 0 under
  /// Process, other_thread_kernels under Thread.
  std::int64_t left_out_kernels = 0;
};

/// Device-memory use of one device, from memory_event rows of memory kind Device: a running
/// sum in (timestamp, row id) order of +bytes per allocation and -bytes per release.
struct DeviceMemoryRow {
  std::uint32_t device_id = 0;
  std::string device_name;        ///< from the device table; empty when the device has no row
  std::int64_t peak_bytes = 0;    ///< highest running sum (0 if it never rises above 0)
  std::int64_t peak_time_ns = 0;  ///< timestamp at which the peak was first reached (0 if none)
  std::int64_t allocations = 0;
  std::int64_t releases = 0;
  std::int64_t bytes_at_end = 0;  ///< running sum after the last event (allocated, never freed)
};

/// Whole-capture counts.
struct Totals {
  std::int64_t kernel_count = 0;
  std::int64_t memcpy_count = 0;
  std::int64_t memset_count = 0;
  std::int64_t api_call_count = 0;
  std::int64_t nvtx_range_count = 0;
  std::int64_t kernel_time_ns = 0;  ///< sum of kernel durations (overlapping kernels add up)
  std::int64_t memcpy_bytes = 0;
  std::int64_t memset_bytes = 0;
};

/// Everything `prof-analyze summary` prints. Rows of each table are sorted by total time
/// descending, ties by name ascending; device_memory is sorted by device id.
struct Summary {
  std::string path;  ///< the capture file
  db::RunSummary run;
  std::vector<db::DeviceInfo> devices;
  std::vector<db::ProcessInfo> processes;
  /// False when the capture holds no process row: the workload never initialized CUDA, so the
  /// collector never ran and every table is empty.
  bool cuda_used = false;
  NameKind kernel_names = NameKind::Demangled;
  /// True when the kernel (demangled names) and API figures came from the aggregates stored at
  /// the end of the run (SummaryStore.h) rather than from the rows (the stored NVTX projection is
  /// the Thread one; the Process projection is computed from the rows); the figures are the same
  /// either way.
  bool from_stored_aggregates = false;
  /// Aggregate mode (docs/aggregate.md): the kernel, memory-operation and device-memory tables
  /// are the whole run's statistics from the aggregate tables (db/AggregateStore.h): counts,
  /// totals, min and max exact; median_ns from the merged DDSketch of each name, within relative
  /// error `sketch_alpha` of the exact median (rank floor((n-1)/2)); stddev_ns 0 (not kept);
  /// memory operations' size statistics hold count and total only; device memory sums each CUDA
  /// context's peak (an upper bound of the device's). API and NVTX tables are the windows' trace
  /// (`traced_records` rows; 0: no window, empty tables).
  bool from_aggregate_mode = false;
  double sketch_alpha = 0;
  std::int64_t traced_records = 0;
  /// How NVTX ranges were projected onto the GPU (NvtxRow::kernel_count).
  NvtxProjection nvtx_projection = NvtxProjection::Process;

  std::vector<KernelRow> kernels;
  std::vector<MemoryOperationRow> memory_operations;
  std::vector<ApiRow> api;
  std::vector<NvtxRow> nvtx;
  std::vector<DeviceMemoryRow> device_memory;
  Totals totals;
};

/// Reads every table of the capture opened by `reader`, or, where the capture holds them and they
/// still match its rows, the stored aggregates in place of the kernel and API-call rows
/// (SummaryStore.h: a few hundred rows instead of one per launch). From the rows, work is O(n) per
/// name group plus the index scans; the NVTX projection merges launches and calls in correlation
/// order (project_windows). A reader opened with TimestampCheck::DeferLargeTables has the kernel
/// and api_call timestamps checked here, only when their rows are read.
/// Throws db::Error when a query fails or a deferred timestamp check fails.
Summary summarize(const db::Reader& reader, NameKind kernel_names = NameKind::Demangled,
                  NvtxProjection nvtx_projection = NvtxProjection::Process);

}  // namespace fuselens::analyzer
