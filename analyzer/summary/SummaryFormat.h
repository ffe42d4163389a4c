#pragma once
// SummaryFormat: writes a Summary (Summary.h) as aligned text tables, CSV or JSON.
//
// Table: Nsight Systems-style text. A header block (capture, command line, host, how the run
//   ended, dropped records, devices, totals), then one titled table per section, in this order:
//   "CUDA GPU Kernel Summary", "CUDA GPU Memory Operation Summary", "CUDA API Summary",
//   "NVTX Range Summary (with GPU projection: process|thread)", "Device Memory Summary". Times use
//   format_duration, sizes format_bytes, percentages one decimal.
// CSV (RFC 4180): the selected tables only, each as a line "# <section>" (kernels,
//   memory_operations, api, nvtx, device_memory), a header row of the snake_case column names
//   below, then one row per table row; sections are separated by one blank line. Times are raw
//   integer nanoseconds (avg/med/stddev and percentages are doubles), bytes raw integers. Fields
//   holding a comma, a double quote, CR or LF are quoted, inner quotes doubled.
// JSON: one object {"run", "devices", "processes", "kernels", "memory_operations", "api",
//   "nvtx", "device_memory", "totals"}; the keys of unselected sections are left out. Table rows
//   are objects with the CSV column names as keys.
//
// Columns (CSV header = JSON keys):
//   kernels:           time_percent,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name
//   memory_operations: time_percent,total_ns,count,avg_ns,med_ns,min_ns,max_ns,stddev_ns,
//                      total_bytes,throughput_gb_per_s,name
//   api:               time_percent,total_ns,num_calls,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name
//   nvtx:              time_percent,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns,
//                      unterminated,kernel_count,left_out_kernels,gpu_time_ns,projection,name
//                      (projection "process" or "thread", Summary::nvtx_projection; the text
//                      table says it in its title, "NVTX Range Summary (with GPU projection:
//                      process)", shows left_out_kernels as "Left Out" and ends with a line
//                      saying how many kernels other threads launched inside the ranges and how
//                      many the projection left out; JSON adds "nvtx_projection": {projection,
//                      left_out_kernels, other_thread_kernels} summed over the rows)
//   device_memory:     device_id,peak_bytes,peak_time_ns,allocations,releases,bytes_at_end,
//                      device_name
//   totals (JSON):     kernel_count,memcpy_count,memset_count,api_call_count,nvtx_range_count,
//                      kernel_time_ns,memcpy_bytes,memset_bytes
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "summary/Summary.h"

namespace fuselens::analyzer {

enum class OutputFormat { Table, Csv, Json };

/// Which tables to write. The run header (table), "run"/"devices"/"processes"/"totals" (JSON)
/// are always written.
struct SummarySections {
  bool kernels = true;
  bool memory_operations = true;
  bool api = true;
  bool nvtx = true;
  bool device_memory = true;

  static SummarySections all() { return {}; }
  static SummarySections none() { return {false, false, false, false, false}; }
};

/// Writes `summary` to `out` in `format`, limited to the sections in `which`.
void write_summary(std::ostream& out, const Summary& summary, OutputFormat format,
                   const SummarySections& which = SummarySections::all());

/// The JSON document that write_summary writes for OutputFormat::Json.
nlohmann::json summary_to_json(const Summary& summary,
                               const SummarySections& which = SummarySections::all());

/// The sentence that says how NVTX ranges were projected onto the GPU and what that left out,
/// shared by the summary's text table, the HTML report, the comparison and prof-gui:
/// process: "GPU projection: process (kernels launched inside a range by any of its process's
/// threads; 12 of them by threads other than the range's; none left out)"; thread: "GPU
/// projection: thread (kernels launched by the range's own thread, as Nsight Systems'
/// nvtx_gpu_proj_sum; 12 kernels other threads launched inside the ranges left out)".
std::string nvtx_projection_note(NvtxProjection projection, std::int64_t left_out_kernels,
                                 std::int64_t other_thread_kernels);

/// A duration for people: "999 ns" (one decimal when not whole, e.g. "12.5 ns") below 1 µs,
/// then three decimals in the largest unit that keeps the value >= 1: "12.345 µs", "1.234 ms",
/// "2.000 s". Negative values keep their sign.
std::string format_duration(double ns);

/// A size for people, in decimal SI units to match GB/s throughput (1 kB = 1000 B, 1 MB = 1e6 B,
/// as Nsight Systems' memory-size tables): "512 B", then three decimals in kB, MB, GB or TB:
/// "1.500 kB", "4.000 MB".
std::string format_bytes(double bytes);

/// One CSV field per RFC 4180: quoted when it holds a comma, a double quote, CR or LF, with
/// inner double quotes doubled. A cell a spreadsheet would evaluate as a formula (first character
/// =, +, -, @, TAB or CR, and not a plain number such as "-5") is written as a quoted text cell
/// with a leading single quote, as OWASP's "CSV Injection" page advises: "=cmd|..." becomes
/// "'=cmd|...".
std::string csv_field(const std::string& value);

/// How the run ended, in words: "exited with status 3", "killed by signal 11 (SIGSEGV)", and for
/// a capture whose run row prof-run never finalized (prof-run killed) "ended without prof-run
/// finalizing it (...)".
std::string describe_run_end(const db::RunEnd& end);

}  // namespace fuselens::analyzer
