#pragma once
// The edges of capture windows: GPU work launched while no window was open but executed after one
// opened.
//
// A capture window (prof-run --delay/--duration, --capture-range, --steps; docs/capture-control.md)
// records what is launched inside it. The collector opens a window by switching on the API records
// first and the GPU activity kinds after them (Collector::set_recording), from whichever thread
// opens it (the timer of --delay, an NVTX range, cudaProfilerStart); a launch that another thread
// entered just before the API records came on reaches the GPU after the kernel kind came on, so
// its kernel is recorded without its launch call. Such a kernel belongs to no window, and no
// analysis can attribute it (no calling context, no thread). CUPTI numbers the API calls of a
// process with one increasing correlation id, given when the call is entered, so the calls made
// inside window w have ids in [lo_w, hi_w], the least and greatest ids of its recorded calls; a
// GPU record without a recorded call whose id lies outside every window's [lo_w, hi_w] was
// launched outside every window.

#include <cstdint>

#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

/// GPU records left out by leave_out_window_edge_records, per table.
struct WindowEdgeRecords {
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0;
  std::uint64_t total() const { return kernels + memcpys + memsets; }
};

/// Deletes, in one transaction, the kernel, memcpy and memset rows of every process that has
/// capture_window rows whose launch call is not in the capture (no api_call row of the process
/// with their correlation id) and whose correlation id lies outside [lo_w, hi_w] of each of the
/// process's windows (lo_w, hi_w: least and greatest correlation id of the process's api_call rows
/// starting in [start_ns, end_ns] of window w; a window without an end, still open when the
/// process ended, reaches from lo_w to every greater id). Records with their
/// launch call, records of processes without windows, and records without a call inside a
/// window's id range (their call is missing for another reason) are kept, and so are all records
/// of a process with no api_call row at all (API records not traced) and records of correlation
/// id 0 (no launch call). Returns how many rows
/// were deleted. Needs the capture's correlation indexes (Writer::finalize builds them) to run in
/// time proportional to the rows outside the ranges (a lean capture, Layout.h, has none: its
/// kernels are deleted from kernel_lean, and each record outside the ranges scans the calls).
/// Throws db::Error on an SQLite error.
WindowEdgeRecords leave_out_window_edge_records(Connection& connection);

}  // namespace fuselens::db
