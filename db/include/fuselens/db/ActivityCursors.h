#pragma once
// ActivityCursors: typed cursors (Cursor.h) over the activity tables of a capture: kernels,
// copies (memcpy), memsets and API calls. Each function names one query an analysis needs and
// says which fields of its row struct it fills (the others stay 0); times are ns on CUPTI's
// clock, durations are end_ns - start_ns in ns, bytes are bytes. Every function takes an
// ActivityFilter whose set fields go into the WHERE clause as bound parameters.
// Errors: db::Error from SQLite.

#include <cstdint>
#include <optional>

#include "fuselens/db/Cursor.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Strings.h"

namespace fuselens::db {

/// A string id (a kernel name column or an API call's name_id) and one duration.
struct IdDuration {
  std::int64_t id = 0;
  std::int64_t duration_ns = 0;
};

/// Row order of kernel_durations_by_name and api_durations_by_name.
enum class RowOrder {
  ById,  ///< ORDER BY the id (a finalized capture streams it from kernel_by_name / api_by_name)
  Scan,  ///< as SQLite scans (no ORDER BY)
};

/// (name id of `names`, duration) of every kernel.
Cursor<IdDuration> kernel_durations_by_name(const Reader& reader, NameKind names, RowOrder order,
                                            const ActivityFilter& filter = {});
/// (name_id, duration) of every API call, ordered by name_id.
Cursor<IdDuration> api_durations_by_name(const Reader& reader, const ActivityFilter& filter = {});

/// One kernel row; which fields are filled depends on the cursor.
struct KernelRow {
  std::int64_t pid = 0, device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int64_t start_ns = 0, end_ns = 0, duration_ns = 0;
  std::int64_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
  std::int64_t registers_per_thread = 0, static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::int64_t demangled_name_id = 0;
  std::int64_t name_id = 0;  ///< the id in the column of the NameKind asked for
};

/// Every kernel for a timeline: device_id, stream_id, pid, start_ns, end_ns, correlation_id,
/// grid and block sizes, registers, shared memory, demangled_name_id and name_id.
Cursor<KernelRow> kernel_details(const Reader& reader, NameKind names,
                                 const ActivityFilter& filter = {});
/// Every kernel: pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns, name_id.
Cursor<KernelRow> kernel_launches(const Reader& reader, NameKind names,
                                  const ActivityFilter& filter = {});
/// Every kernel: pid, correlation_id, duration_ns, name_id.
Cursor<KernelRow> kernel_durations(const Reader& reader, NameKind names,
                                   const ActivityFilter& filter = {});

/// The GPU activity tables.
enum class GpuTable : int { Kernel = 0, Memcpy = 1, Memset = 2 };

/// The work of one GPU record, for projecting it onto its launch: bytes is 0 for kernels.
struct LaunchWork {
  std::int64_t pid = 0, correlation_id = 0, duration_ns = 0, bytes = 0;
};
/// Every record of `table`: (pid, correlation_id, duration, bytes); with `by_correlation`
/// ordered by (pid, correlation_id) (the kernels by id, that order checked, on a reader with
/// Reader::read_lean_by_id), else as scanned (from the correlation index when the capture has
/// one).
Cursor<LaunchWork> launch_work(const Reader& reader, GpuTable table, bool by_correlation,
                               const ActivityFilter& filter = {});

/// The interval of one GPU record.
struct GpuInterval {
  std::int64_t pid = 0, correlation_id = 0, start_ns = 0, end_ns = 0;
};
/// Every record of `table`: pid, correlation_id, start_ns, end_ns.
Cursor<GpuInterval> gpu_intervals(const Reader& reader, GpuTable table,
                                  const ActivityFilter& filter = {});

/// One kernel, copy or memset of gpu_records_by_correlation; the fields of its table are filled.
struct GpuRecordRow {
  GpuTable table = GpuTable::Kernel;
  std::int64_t pid = 0, correlation_id = 0, start_ns = 0, end_ns = 0;
  std::int64_t device_id = 0, context_id = 0, stream_id = 0;
  std::optional<std::int64_t> graph_id, graph_node_id;  ///< nullopt: not launched by a graph
  // kernels
  std::int64_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
  std::int64_t registers_per_thread = 0, static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::int64_t local_memory_per_thread = 0;
  std::int64_t name_id = 0;  ///< the id in the column of the NameKind asked for
  // copies and memsets
  std::int64_t copy_kind = 0, src_kind = 0, dst_kind = 0;  ///< copies
  std::int64_t value = 0, memory_kind = 0;                 ///< memsets
  std::int64_t bytes = 0, is_async = 0;
};
/// Every kernel, copy and memset in one stream ordered by (pid, correlation_id, start_ns), every
/// field of its table filled.
Cursor<GpuRecordRow> gpu_records_by_correlation(const Reader& reader, NameKind names);

/// One kernel, copy or memset of gpu_spans_by_correlation: when and where it ran.
struct GpuSpanRow {
  GpuTable table = GpuTable::Kernel;
  std::int64_t pid = 0, correlation_id = 0, start_ns = 0, end_ns = 0;
  std::int64_t device_id = 0, stream_id = 0;
  std::int64_t name_id = 0;  ///< kernels: the id in the column of the NameKind asked for; else 0
  std::int64_t bytes = 0;    ///< copies and memsets: bytes moved or set; kernels 0
};
/// Every kernel, copy and memset ordered by (pid, correlation_id, start_ns) with only the fields
/// of GpuSpanRow: the narrow gpu_records_by_correlation of readers that stream every launch (the
/// step statistics, compare's range projections; a full-layout capture's correlation indexes
/// give the order without a sort).
Cursor<GpuSpanRow> gpu_spans_by_correlation(const Reader& reader, NameKind names);

/// One copy or memset: kind is memcpy.copy_kind (0 for memsets).
struct CopyDuration {
  std::int64_t copy_kind = 0, duration_ns = 0, bytes = 0;
};
/// Every copy: copy_kind, duration, bytes.
Cursor<CopyDuration> copy_durations(const Reader& reader, const ActivityFilter& filter = {});
/// Every memset: duration, bytes.
Cursor<CopyDuration> memset_durations(const Reader& reader, const ActivityFilter& filter = {});

/// One copy or memset row; which fields are filled depends on the cursor.
struct CopyRow {
  std::int64_t pid = 0, device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t copy_kind = 0, src_kind = 0, dst_kind = 0;  ///< copies
  std::int64_t memory_kind = 0;                            ///< memsets
  std::int64_t bytes = 0, is_async = 0;
};
/// Every copy for a timeline: device_id, stream_id, pid, start_ns, end_ns, correlation_id,
/// copy_kind, bytes, is_async.
Cursor<CopyRow> copy_details(const Reader& reader, const ActivityFilter& filter = {});
/// Every memset for a timeline: device_id, stream_id, pid, start_ns, end_ns, correlation_id,
/// bytes, is_async.
Cursor<CopyRow> memset_details(const Reader& reader, const ActivityFilter& filter = {});
/// Every copy: pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns,
/// copy_kind, src_kind, dst_kind, bytes, is_async.
Cursor<CopyRow> copy_launches(const Reader& reader, const ActivityFilter& filter = {});
/// Every memset: pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns,
/// memory_kind, bytes, is_async.
Cursor<CopyRow> memset_launches(const Reader& reader, const ActivityFilter& filter = {});

/// One API call row; which fields are filled depends on the cursor.
struct ApiCallRow {
  std::int64_t id = 0, pid = 0, tid = 0, correlation_id = 0, start_ns = 0, end_ns = 0;
  std::int64_t domain = 0, callback_id = 0, name_id = 0, return_code = 0;
};
/// Every API call: pid, correlation_id, tid, start_ns, as scanned (from api_by_correlation when
/// the capture has it).
Cursor<ApiCallRow> api_call_starts(const Reader& reader, const ActivityFilter& filter = {});
/// Every API call: pid, correlation_id, tid, start_ns, id, ordered by (pid, correlation_id); on a
/// reader with Reader::read_lean_by_id, by id with that order checked (OrderBroken, Cursor.h).
Cursor<ApiCallRow> api_call_starts_by_correlation(const Reader& reader,
                                                  const ActivityFilter& filter = {});
/// The launching call of GPU work read in (pid, correlation id) order: of the API calls with the
/// work's pid and correlation id, the earliest (ties: the smallest id), as every projection of a
/// launch takes it. Reads api_call_starts_by_correlation once, forward: ask for keys in ascending
/// order (asking for the same key again is answered from the last find).
class LaunchCalls {
 public:
  struct Call {
    std::int64_t tid = 0, start_ns = 0;
  };
  explicit LaunchCalls(const Reader& reader);
  /// The launching call of (pid, correlation_id), or nullopt when it has none.
  std::optional<Call> find(std::int64_t pid, std::int64_t correlation_id);

 private:
  Cursor<ApiCallRow> calls_;
  std::optional<ApiCallRow> next_;
  std::optional<std::pair<std::int64_t, std::int64_t>> key_;  // the key last found
  std::optional<Call> call_;                                  // its call
};

/// Every API call: pid, tid, name_id, start_ns, end_ns, correlation_id, id, ordered by (start_ns,
/// id) (by id, that order checked, on a reader with Reader::read_lean_by_id).
Cursor<ApiCallRow> api_calls_by_start(const Reader& reader, const ActivityFilter& filter = {});
/// Every API call: pid, tid, domain, name_id, start_ns, end_ns, correlation_id, return_code,
/// ordered by (pid, tid, start_ns, end_ns DESC): enclosing calls before those they enclose.
Cursor<ApiCallRow> api_calls_by_thread(const Reader& reader, const ActivityFilter& filter = {});
/// Every API call: pid, correlation_id, start_ns, end_ns, tid, domain, callback_id, name_id,
/// return_code, ordered by (pid, correlation_id, start_ns) (by id, checked, as
/// api_call_starts_by_correlation on a reader with Reader::read_lean_by_id).
Cursor<ApiCallRow> api_calls_by_correlation(const Reader& reader,
                                            const ActivityFilter& filter = {});
/// The earliest start of the API calls of each (pid, correlation_id): pid, correlation_id and
/// start_ns, ordered by (pid, correlation_id).
Cursor<ApiCallRow> api_call_first_starts(const Reader& reader);

}  // namespace fuselens::db
