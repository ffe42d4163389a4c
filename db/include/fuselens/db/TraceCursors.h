#pragma once
// TraceCursors: typed cursors (Cursor.h) over the other tables the analyses read: NVTX ranges
// and marks, device-memory events, synchronizations, threads, calling-context nodes, frames and
// launch contexts, hardware counters and kernel arguments, and the time extent of each timed
// table. Each function names one query and says which fields of its row it fills; times are ns
// on CUPTI's clock, bytes are bytes. Errors: db::Error from SQLite.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Cursor.h"
#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// One NVTX range or mark (marks: start_ns is the timestamp, no end); which fields are filled
/// depends on the cursor. The payload column holds an integer or a real: both readings are given
/// (SQLite's conversions), nullopt when the column is NULL.
struct NvtxRow {
  std::int64_t id = 0, pid = 0, tid = 0, domain_id = 0, text_id = 0, start_ns = 0;
  std::optional<std::int64_t> end_ns;  ///< nullopt: never ended
  std::int64_t depth = 0, category = 0, color = 0, payload_kind = 0;
  std::optional<std::int64_t> payload_int;
  std::optional<double> payload_real;
  std::string domain, text;  ///< the strings, for the cursors that join them
};

/// Every range: pid, tid, domain_id, text_id, start_ns, end_ns, id.
Cursor<NvtxRow> nvtx_range_names(const Reader& reader, const ActivityFilter& filter = {});
/// Every ended range: id, pid, tid, start_ns, end_ns, ordered by id (`ids_only`: id alone, as
/// scanned).
Cursor<NvtxRow> ended_nvtx_ranges(const Reader& reader, bool ids_only = false);
/// Every ended range: pid, tid, domain_id, text_id, start_ns, end_ns, payload_kind, payload.
Cursor<NvtxRow> ended_nvtx_range_payloads(const Reader& reader, const ActivityFilter& filter = {});
/// Every range: pid, tid, domain_id, text_id, start_ns, end_ns, depth, payload_kind, payload
/// (`with_style`: also category and color).
Cursor<NvtxRow> nvtx_ranges(const Reader& reader, bool with_style,
                            const ActivityFilter& filter = {});
/// Every ended range with its strings: pid, tid, domain, text, start_ns, end_ns.
Cursor<NvtxRow> ended_nvtx_ranges_named(const Reader& reader);
/// The ranges whose text is a PyTorch autograd range (", seq = " inside, or an
/// "autograd::engine::evaluate_function: " prefix): pid, tid, text, start_ns, end_ns (INT64_MAX
/// for a range never ended).
Cursor<NvtxRow> autograd_nvtx_ranges(const Reader& reader);
/// The ranges of FuseLens's module view (text "fuselens:module:fwd:PATH" or
/// "fuselens:module:bwd:PATH", Instrumentation.h): pid, tid, text, start_ns, end_ns (INT64_MAX for
/// a range never ended), ordered by (pid, tid, start_ns, id).
Cursor<NvtxRow> module_nvtx_ranges(const Reader& reader);
/// Every mark: pid, tid, domain_id, text_id, start_ns (its timestamp), category, color,
/// payload_kind, payload.
Cursor<NvtxRow> nvtx_marks(const Reader& reader, const ActivityFilter& filter = {});
/// The marks of NVTX domain `domain`: pid, tid, start_ns (its timestamp), text.
Cursor<NvtxRow> nvtx_marks_in_domain(const Reader& reader, const std::string& domain);
/// The module view's name marks ("fuselens:module:name:<address hex>:<class>:<path>",
/// Instrumentation.h), any domain: pid, tid, start_ns (its timestamp), text; by pid, then time.
/// The whole capture's, also when the reader is restricted to a window.
Cursor<NvtxRow> module_name_marks(const Reader& reader);
/// True when the capture has a mark in NVTX domain `domain`.
bool has_nvtx_mark_in_domain(const Reader& reader, const std::string& domain);

/// One memory event; which fields are filled depends on the cursor.
struct MemoryEventRow {
  std::int64_t pid = 0, device_id = 0, timestamp_ns = 0, operation = 0, memory_kind = 0;
  std::int64_t address = 0, bytes = 0;
};
/// Order of device_memory_events.
enum class MemoryOrder {
  ByProcessDevice,  ///< ORDER BY pid, device_id, timestamp_ns, id
  ByDevice,         ///< ORDER BY device_id, timestamp_ns, id
  ByTime,           ///< ORDER BY timestamp_ns, id
};
/// The device-memory (MemoryKind::Device) events: pid (ByProcessDevice only), device_id,
/// timestamp_ns, operation, bytes.
Cursor<MemoryEventRow> device_memory_events(const Reader& reader, MemoryOrder order,
                                            const ActivityFilter& filter = {});
/// Every memory event: pid, device_id, timestamp_ns, operation, memory_kind, address, bytes,
/// ordered by (timestamp_ns, id).
Cursor<MemoryEventRow> memory_events(const Reader& reader, const ActivityFilter& filter = {});
/// The device-memory (MemoryKind::Device) events of the whole capture, also on a reader
/// restricted to a window (the memory held inside a window was allocated before it): pid,
/// timestamp_ns, operation, bytes, ordered by (pid, timestamp_ns, id). Empty without the table.
Cursor<MemoryEventRow> device_memory_history(const Reader& reader);
/// The device-memory events of one device: how many, the first and the last timestamp.
struct DeviceMemoryExtent {
  std::int64_t device_id = 0, events = 0, first_ns = 0, last_ns = 0;
};
/// One row per device with device-memory events (grouped by device_id).
Cursor<DeviceMemoryExtent> device_memory_extents(const Reader& reader);

/// One synchronization: pid, start_ns, end_ns, sync_type, context_id, stream_id, correlation_id.
struct SyncRow {
  std::int64_t pid = 0, start_ns = 0, end_ns = 0, sync_type = 0, context_id = 0, stream_id = 0;
  std::int64_t correlation_id = 0;
};
/// Every synchronization, ordered by (start_ns, id).
Cursor<SyncRow> syncs(const Reader& reader, const ActivityFilter& filter = {});

/// One thread: pid, tid and its name (nullopt when NULL).
struct ThreadRow {
  std::int64_t pid = 0, tid = 0;
  std::optional<std::string> name;
};
/// Every thread (`ordered`: by pid, tid).
Cursor<ThreadRow> threads(const Reader& reader, bool ordered);

/// The first and last time of one timed table; nullopt when the table is empty.
struct TimeExtent {
  std::optional<std::int64_t> first_ns;
  std::optional<std::int64_t> last_ns;
};
/// The timed tables time_extent measures.
enum class TimedTable { Kernel, Memcpy, Memset, MemoryEvent, ApiCall, NvtxRange, NvtxMark };
/// min(start) and max(end) of `table` (instants: of the timestamp; NVTX ranges: the latest of
/// start and end, a range never ended counting its start). Reads two values, not the rows: the
/// deferred check of kernel or api_call (Reader::prepare) runs only when they are implausible
/// (outside [0, 2^62) ns or last before first); throws db::Error then, naming the row when the
/// check finds it.
TimeExtent time_extent(const Reader& reader, TimedTable table);
/// True when `table` (under a window, the window's view of it) has a row: one step, not a scan,
/// and no column read (no deferred timestamp check). Throws db::Error when the query fails.
bool has_rows(const Reader& reader, TimedTable table);

/// The demangled name id every kernel of the capture has, when they all have one (the step
/// search's shortcut: one kernel name repeats with any period and anchors none); nullopt when the
/// kernels have two ids or more, or none. Two descents of kernel_by_name, not a scan (a lean
/// capture, without the index: two scans). Throws db::Error when a query fails.
std::optional<std::int64_t> single_kernel_name_id(const Reader& reader);

/// The spans recorded under prof-run's capture control (capture_window, schema 6), every
/// process's, by start; a window still open when its process ended runs to kMaxTimestampNs.
/// Empty when the whole run was recorded (or the capture predates the table). Rows with
/// implausible times are skipped.
std::vector<TimeSpan> capture_windows(const Reader& reader);

/// One calling-context node: id, parent_id (0 for the root), frame_id (0 for none), pid.
struct CctNodeRow {
  std::int64_t id = 0, parent_id = 0, frame_id = 0, pid = 0;
};
Cursor<CctNodeRow> cct_nodes(const Reader& reader);
/// Number of processes with calling-context nodes.
std::int64_t cct_process_count(const Reader& reader);

/// One frame with its strings ('' and 0 for NULL columns).
struct FrameRow {
  std::int64_t id = 0;
  std::string function, module, file;
  std::int64_t module_offset = 0, line = 0, kind = 0;
  bool missing = false;  ///< call_path_frames: the root or a node the tree lacks (no frame)
  std::int64_t tid = 0;  ///< call_path_frames: the thread of the launch
};
/// Every frame: id, function, module, module_offset, file, line, kind.
Cursor<FrameRow> frames(const Reader& reader);
/// The frames from the root down to the node of launch (pid, correlation_id), at most
/// `max_walk` parents up: tid, missing, kind, function, module, module_offset, file, line.
Cursor<FrameRow> call_path_frames(const Reader& reader, std::int64_t pid,
                                  std::int64_t correlation_id, std::int64_t max_walk);

/// The calling context of one launch: pid, correlation_id, cct_node_id, tid.
struct LaunchContextRow {
  std::int64_t pid = 0, correlation_id = 0, node_id = 0, tid = 0;
  /// PyTorch autograd sequence numbers (schema 9, api_context; -1 when NULL or older).
  std::int64_t forward_seq = -1, backward_seq = -1;
};
Cursor<LaunchContextRow> launch_contexts(const Reader& reader);
/// Number of launches with a calling context.
std::int64_t launch_context_count(const Reader& reader);
/// True when any launch has a calling context.
bool has_launch_contexts(const Reader& reader);

/// One GPU operation as calling-context attribution sees it: pid, correlation_id, label
/// ("<gpu kernel> NAME", "<gpu copy> KIND", "<gpu memset>"), duration_ns, bytes (0 for kernels),
/// graph_node_id (CUPTI's id of the CUDA graph node that ran it; 0 when not launched by a graph
/// launch).
struct GpuOperationRow {
  std::int64_t pid = 0, correlation_id = 0, duration_ns = 0, bytes = 0, graph_node_id = 0;
  std::string label;
};
/// Kernels (demangled names), then copies, then memsets, each as scanned.
Cursor<GpuOperationRow> gpu_operations(const Reader& reader, GpuTable table);

/// One GPU operation of gpu_operations_by_correlation: its table and row id, pid,
/// correlation_id, `code` (kernels: demangled_name_id; copies: copy_kind; memsets: 0),
/// duration_ns, bytes (0 for kernels) and graph_node_id (0 when not launched by a graph launch).
struct GpuOperationCode {
  GpuTable table = GpuTable::Kernel;
  std::int64_t id = 0, pid = 0, correlation_id = 0, code = 0, duration_ns = 0, bytes = 0,
               graph_node_id = 0;
};
/// Every kernel, copy and memset ordered by (pid, correlation_id), names as string ids: the rows
/// of gpu_operations for a reader that streams them beside launch_contexts_by_correlation (the
/// correlation indexes give the order without a sort).
Cursor<GpuOperationCode> gpu_operations_by_correlation(const Reader& reader);
/// launch_contexts ordered by (pid, correlation_id): api_context's primary key order.
Cursor<LaunchContextRow> launch_contexts_by_correlation(const Reader& reader);
/// The label of each copy kind as gpu_operations writes it ("<gpu copy> " + the kind's name, or
/// "Unknown"), by enum_memcpy_kind.value.
std::unordered_map<std::int64_t, std::string> copy_operation_labels(const Reader& reader);

/// One row of graph_node (schema version 7): pid, node_id, original_node_id (0: not a clone),
/// graph_id, correlation_id (of the traced call that created the node; 0: none).
struct GraphNodeRow {
  std::int64_t pid = 0, node_id = 0, original_node_id = 0, graph_id = 0, correlation_id = 0;
};
/// Every graph node row, as scanned; no rows for a capture before schema version 7.
Cursor<GraphNodeRow> graph_nodes(const Reader& reader);

/// One hardware counter of one launch: pid, correlation_id, metric name, value.
struct CounterRow {
  std::int64_t pid = 0, correlation_id = 0;
  std::string metric;
  double value = 0;
};
Cursor<CounterRow> kernel_counters(const Reader& reader);

/// One captured kernel argument: pid, correlation_id, value (its raw 64 bits).
struct KernelArgRow {
  std::int64_t pid = 0, correlation_id = 0, value = 0;
};
/// Every captured argument, ordered by (pid, correlation_id, param_index).
Cursor<KernelArgRow> kernel_args(const Reader& reader);

}  // namespace fuselens::db
