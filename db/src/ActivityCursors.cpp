#include "fuselens/db/ActivityCursors.h"

#include <iterator>
#include <string>
#include <vector>

namespace fuselens::db {
namespace {

using detail::FilterColumns;

constexpr FilterColumns kGpu{};
constexpr FilterColumns kApi{"start_ns", "name_id", false, false, true};

FilterColumns kernel_columns(NameKind names) {
  FilterColumns c;
  c.name = kernel_name_column(names);
  return c;
}

// A cursor over `select_from` filtered and in `order_by`'s order; with `key` (a lean capture's
// kernel or api_call in (pid, correlation id) order) and a reader that reads those by id
// (Reader::read_lean_by_id), in id order with `key`'s order checked instead.
template <typename Row>
Cursor<Row> open(const Reader& reader, const std::string& select_from, const ActivityFilter& filter,
                 const FilterColumns& columns, const std::string& order_by,
                 typename Cursor<Row>::ReadRow read, const std::string& extra_where = {},
                 typename Cursor<Row>::KeyOf key = nullptr) {
  std::vector<std::int64_t> binds;
  const bool by_id = key != nullptr && reader.lean_by_id();
  const std::string sql = detail::filtered_sql(select_from, extra_where, filter, columns,
                                               by_id ? "ORDER BY id" : order_by, binds);
  Statement s = detail::prepare_bound(reader, sql, binds);
  return by_id ? Cursor<Row>(std::move(s), read, key) : Cursor<Row>(std::move(s), read);
}

template <typename Row>
OrderKey correlation_key(const Row& r) {
  return {r.pid, r.correlation_id, 0};
}

template <typename Row>
OrderKey correlation_start_key(const Row& r) {
  return {r.pid, r.correlation_id, r.start_ns};
}

OrderKey start_key(const ApiCallRow& r) { return {r.start_ns, r.id, 0}; }

const char* table_name(GpuTable table) {
  // In GpuTable's order; a value outside it reads as Kernel.
  constexpr const char* kTables[] = {"kernel", "memcpy", "memset"};
  const auto i = static_cast<std::size_t>(table);
  return i < std::size(kTables) ? kTables[i] : kTables[0];
}

// A row of gpu_records_by_correlation (its columns there).
void read_gpu_record(const Statement& g, GpuRecordRow& r) {
  r.table = static_cast<GpuTable>(g.int64(0));
  detail::read_columns(g, r, 1, &GpuRecordRow::pid, &GpuRecordRow::correlation_id,
                       &GpuRecordRow::start_ns, &GpuRecordRow::end_ns, &GpuRecordRow::device_id,
                       &GpuRecordRow::context_id, &GpuRecordRow::stream_id);
  if (!g.is_null(8)) r.graph_id = g.int64(8);
  if (!g.is_null(9)) r.graph_node_id = g.int64(9);
  switch (r.table) {
    case GpuTable::Kernel:
      detail::read_columns(g, r, 10, &GpuRecordRow::grid_x, &GpuRecordRow::grid_y,
                           &GpuRecordRow::grid_z, &GpuRecordRow::block_x, &GpuRecordRow::block_y,
                           &GpuRecordRow::block_z, &GpuRecordRow::registers_per_thread,
                           &GpuRecordRow::static_shared_bytes, &GpuRecordRow::dynamic_shared_bytes,
                           &GpuRecordRow::local_memory_per_thread, &GpuRecordRow::name_id);
      break;
    case GpuTable::Memcpy:
      detail::read_columns(g, r, 10, &GpuRecordRow::copy_kind, &GpuRecordRow::src_kind,
                           &GpuRecordRow::dst_kind, &GpuRecordRow::bytes, &GpuRecordRow::is_async);
      break;
    case GpuTable::Memset:
      detail::read_columns(g, r, 10, &GpuRecordRow::bytes, &GpuRecordRow::value,
                           &GpuRecordRow::memory_kind, &GpuRecordRow::is_async);
      break;
  }
}

void read_id_duration(const Statement& s, IdDuration& r) {
  r.id = s.int64(0);
  r.duration_ns = s.int64(1);
}

}  // namespace

Cursor<IdDuration> kernel_durations_by_name(const Reader& reader, NameKind names, RowOrder order,
                                            const ActivityFilter& filter) {
  const std::string column = kernel_name_column(names);
  return open<IdDuration>(reader, "SELECT " + column + ", end_ns - start_ns FROM kernel", filter,
                          kernel_columns(names),
                          order == RowOrder::ById ? "ORDER BY " + column : "", read_id_duration);
}

Cursor<IdDuration> api_durations_by_name(const Reader& reader, const ActivityFilter& filter) {
  return open<IdDuration>(reader, "SELECT name_id, end_ns - start_ns FROM api_call", filter, kApi,
                          "ORDER BY name_id", read_id_duration);
}

Cursor<KernelRow> kernel_details(const Reader& reader, NameKind names,
                                 const ActivityFilter& filter) {
  return open<KernelRow>(
      reader,
      std::string(
          "SELECT device_id, stream_id, pid, start_ns, end_ns, correlation_id, grid_x, grid_y, "
          "grid_z, block_x, block_y, block_z, registers_per_thread, static_shared_bytes, "
          "dynamic_shared_bytes, demangled_name_id, ") +
          kernel_name_column(names) + " FROM kernel",
      filter, kernel_columns(names), "", [](const Statement& s, KernelRow& r) {
        detail::read_columns(s, r, 0, &KernelRow::device_id, &KernelRow::stream_id, &KernelRow::pid,
                             &KernelRow::start_ns, &KernelRow::end_ns, &KernelRow::correlation_id,
                             &KernelRow::grid_x, &KernelRow::grid_y, &KernelRow::grid_z,
                             &KernelRow::block_x, &KernelRow::block_y, &KernelRow::block_z,
                             &KernelRow::registers_per_thread, &KernelRow::static_shared_bytes,
                             &KernelRow::dynamic_shared_bytes, &KernelRow::demangled_name_id,
                             &KernelRow::name_id);
      });
}

Cursor<KernelRow> kernel_launches(const Reader& reader, NameKind names,
                                  const ActivityFilter& filter) {
  return open<KernelRow>(
      reader,
      std::string("SELECT pid, device_id, context_id, stream_id, correlation_id, "
                  "start_ns, end_ns, ") +
          kernel_name_column(names) + " FROM kernel",
      filter, kernel_columns(names), "", [](const Statement& s, KernelRow& r) {
        detail::read_columns(s, r, 0, &KernelRow::pid, &KernelRow::device_id,
                             &KernelRow::context_id, &KernelRow::stream_id,
                             &KernelRow::correlation_id, &KernelRow::start_ns, &KernelRow::end_ns,
                             &KernelRow::name_id);
      });
}

Cursor<KernelRow> kernel_durations(const Reader& reader, NameKind names,
                                   const ActivityFilter& filter) {
  return open<KernelRow>(reader,
                         std::string("SELECT pid, correlation_id, end_ns - start_ns, ") +
                             kernel_name_column(names) + " FROM kernel",
                         filter, kernel_columns(names), "", [](const Statement& s, KernelRow& r) {
                           detail::read_columns(s, r, 0, &KernelRow::pid,
                                                &KernelRow::correlation_id, &KernelRow::duration_ns,
                                                &KernelRow::name_id);
                         });
}

Cursor<LaunchWork> launch_work(const Reader& reader, GpuTable table, bool by_correlation,
                               const ActivityFilter& filter) {
  const std::string bytes = table == GpuTable::Kernel ? "0" : "bytes";
  return open<LaunchWork>(
      reader,
      "SELECT pid, correlation_id, end_ns - start_ns, " + bytes + " FROM " + table_name(table),
      filter, kGpu, by_correlation ? "ORDER BY pid, correlation_id" : "",
      [](const Statement& s, LaunchWork& r) {
        detail::read_columns(s, r, 0, &LaunchWork::pid, &LaunchWork::correlation_id,
                             &LaunchWork::duration_ns, &LaunchWork::bytes);
      },
      {}, by_correlation && table == GpuTable::Kernel ? &correlation_key<LaunchWork> : nullptr);
}

Cursor<GpuInterval> gpu_intervals(const Reader& reader, GpuTable table,
                                  const ActivityFilter& filter) {
  return open<GpuInterval>(
      reader, std::string("SELECT pid, correlation_id, start_ns, end_ns FROM ") + table_name(table),
      filter, kGpu, "", [](const Statement& s, GpuInterval& r) {
        detail::read_columns(s, r, 0, &GpuInterval::pid, &GpuInterval::correlation_id,
                             &GpuInterval::start_ns, &GpuInterval::end_ns);
      });
}

Cursor<GpuRecordRow> gpu_records_by_correlation(const Reader& reader, NameKind names) {
  // Columns: 0 table, 1 pid, 2 correlation_id, 3 start_ns, 4 end_ns, 5 device_id, 6 context_id,
  // 7 stream_id, 8 graph_id, 9 graph_node_id, then per table:
  //   kernel: 10-12 grid, 13-15 block, 16 registers, 17 static shared, 18 dynamic shared,
  //           19 local memory, 20 name id
  //   memcpy: 10 copy_kind, 11 src_kind, 12 dst_kind, 13 bytes, 14 is_async
  //   memset: 10 bytes, 11 value, 12 memory_kind, 13 is_async
  const std::string common =
      "pid, correlation_id, start_ns, end_ns, device_id, context_id, stream_id, graph_id, "
      "graph_node_id, ";
  const std::vector<std::string> arms = {
      "SELECT 0, " + common +
          "grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
          "static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread, " +
          kernel_name_column(names) + " FROM kernel",
      "SELECT 1, " + common +
          "copy_kind, src_kind, dst_kind, bytes, is_async, NULL, NULL, NULL, NULL, NULL, NULL "
          "FROM memcpy",
      "SELECT 2, " + common +
          "bytes, value, memory_kind, is_async, NULL, NULL, NULL, NULL, NULL, NULL, NULL "
          "FROM memset"};
  return detail::union_in_order<GpuRecordRow>(reader, arms, "2, 3, 4", read_gpu_record,
                                              &correlation_start_key<GpuRecordRow>);
}

Cursor<CopyDuration> copy_durations(const Reader& reader, const ActivityFilter& filter) {
  return open<CopyDuration>(reader, "SELECT copy_kind, end_ns - start_ns, bytes FROM memcpy",
                            filter, kGpu, "", [](const Statement& s, CopyDuration& r) {
                              detail::read_columns(s, r, 0, &CopyDuration::copy_kind,
                                                   &CopyDuration::duration_ns,
                                                   &CopyDuration::bytes);
                            });
}

Cursor<CopyDuration> memset_durations(const Reader& reader, const ActivityFilter& filter) {
  return open<CopyDuration>(reader, "SELECT end_ns - start_ns, bytes FROM memset", filter, kGpu, "",
                            [](const Statement& s, CopyDuration& r) {
                              r.duration_ns = s.int64(0);
                              r.bytes = s.int64(1);
                            });
}

Cursor<CopyRow> copy_details(const Reader& reader, const ActivityFilter& filter) {
  return open<CopyRow>(
      reader,
      "SELECT device_id, stream_id, pid, start_ns, end_ns, correlation_id, copy_kind, bytes, "
      "is_async FROM memcpy",
      filter, kGpu, "", [](const Statement& s, CopyRow& r) {
        detail::read_columns(s, r, 0, &CopyRow::device_id, &CopyRow::stream_id, &CopyRow::pid,
                             &CopyRow::start_ns, &CopyRow::end_ns, &CopyRow::correlation_id,
                             &CopyRow::copy_kind, &CopyRow::bytes, &CopyRow::is_async);
      });
}

Cursor<CopyRow> memset_details(const Reader& reader, const ActivityFilter& filter) {
  return open<CopyRow>(
      reader,
      "SELECT device_id, stream_id, pid, start_ns, end_ns, correlation_id, bytes, is_async "
      "FROM memset",
      filter, kGpu, "", [](const Statement& s, CopyRow& r) {
        detail::read_columns(s, r, 0, &CopyRow::device_id, &CopyRow::stream_id, &CopyRow::pid,
                             &CopyRow::start_ns, &CopyRow::end_ns, &CopyRow::correlation_id,
                             &CopyRow::bytes, &CopyRow::is_async);
      });
}

namespace {
void read_gpu_launch(const Statement& s, CopyRow& r) {
  detail::read_columns(s, r, 0, &CopyRow::pid, &CopyRow::device_id, &CopyRow::context_id,
                       &CopyRow::stream_id, &CopyRow::correlation_id, &CopyRow::start_ns,
                       &CopyRow::end_ns);
}
}  // namespace

Cursor<CopyRow> copy_launches(const Reader& reader, const ActivityFilter& filter) {
  return open<CopyRow>(
      reader,
      "SELECT pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns,"
      " copy_kind, src_kind, dst_kind, bytes, is_async FROM memcpy",
      filter, kGpu, "", [](const Statement& s, CopyRow& r) {
        read_gpu_launch(s, r);
        detail::read_columns(s, r, 7, &CopyRow::copy_kind, &CopyRow::src_kind, &CopyRow::dst_kind,
                             &CopyRow::bytes, &CopyRow::is_async);
      });
}

Cursor<CopyRow> memset_launches(const Reader& reader, const ActivityFilter& filter) {
  return open<CopyRow>(
      reader,
      "SELECT pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns,"
      " memory_kind, bytes, is_async FROM memset",
      filter, kGpu, "", [](const Statement& s, CopyRow& r) {
        read_gpu_launch(s, r);
        detail::read_columns(s, r, 7, &CopyRow::memory_kind, &CopyRow::bytes, &CopyRow::is_async);
      });
}

Cursor<ApiCallRow> api_call_starts(const Reader& reader, const ActivityFilter& filter) {
  return open<ApiCallRow>(reader, "SELECT pid, correlation_id, tid, start_ns FROM api_call", filter,
                          kApi, "", [](const Statement& s, ApiCallRow& r) {
                            detail::read_columns(s, r, 0, &ApiCallRow::pid,
                                                 &ApiCallRow::correlation_id, &ApiCallRow::tid,
                                                 &ApiCallRow::start_ns);
                          });
}

Cursor<ApiCallRow> api_call_starts_by_correlation(const Reader& reader,
                                                  const ActivityFilter& filter) {
  return open<ApiCallRow>(
      reader, "SELECT pid, correlation_id, tid, start_ns, id FROM api_call", filter, kApi,
      "ORDER BY pid, correlation_id",
      [](const Statement& s, ApiCallRow& r) {
        detail::read_columns(s, r, 0, &ApiCallRow::pid, &ApiCallRow::correlation_id,
                             &ApiCallRow::tid, &ApiCallRow::start_ns, &ApiCallRow::id);
      },
      {}, &correlation_key<ApiCallRow>);
}

LaunchCalls::LaunchCalls(const Reader& reader)
    : calls_(api_call_starts_by_correlation(reader)), next_(calls_.next()) {}

std::optional<LaunchCalls::Call> LaunchCalls::find(std::int64_t pid, std::int64_t correlation_id) {
  const std::pair key(pid, correlation_id);
  if (key_ == key) return call_;  // several operations of one launch (a graph, a copy's parts)
  while (next_ && std::pair(next_->pid, next_->correlation_id) < key) next_ = calls_.next();
  key_ = key;
  call_.reset();
  std::int64_t id = 0;
  for (; next_ && std::pair(next_->pid, next_->correlation_id) == key; next_ = calls_.next()) {
    if (!call_ || next_->start_ns < call_->start_ns ||
        (next_->start_ns == call_->start_ns && next_->id < id)) {
      call_ = Call{next_->tid, next_->start_ns};
      id = next_->id;
    }
  }
  return call_;
}

Cursor<ApiCallRow> api_calls_by_start(const Reader& reader, const ActivityFilter& filter) {
  return open<ApiCallRow>(
      reader, "SELECT pid, tid, name_id, start_ns, end_ns, correlation_id, id FROM api_call",
      filter, kApi, "ORDER BY start_ns, id",
      [](const Statement& s, ApiCallRow& r) {
        detail::read_columns(s, r, 0, &ApiCallRow::pid, &ApiCallRow::tid, &ApiCallRow::name_id,
                             &ApiCallRow::start_ns, &ApiCallRow::end_ns,
                             &ApiCallRow::correlation_id, &ApiCallRow::id);
      },
      {}, &start_key);
}

Cursor<ApiCallRow> api_calls_by_thread(const Reader& reader, const ActivityFilter& filter) {
  return open<ApiCallRow>(
      reader,
      "SELECT pid, tid, domain, name_id, start_ns, end_ns, correlation_id, return_code "
      "FROM api_call",
      filter, kApi, "ORDER BY pid, tid, start_ns, end_ns DESC",
      [](const Statement& s, ApiCallRow& r) {
        detail::read_columns(s, r, 0, &ApiCallRow::pid, &ApiCallRow::tid, &ApiCallRow::domain,
                             &ApiCallRow::name_id, &ApiCallRow::start_ns, &ApiCallRow::end_ns,
                             &ApiCallRow::correlation_id, &ApiCallRow::return_code);
      });
}

Cursor<GpuSpanRow> gpu_spans_by_correlation(const Reader& reader, NameKind names) {
  // Columns: 0 table, 1 pid, 2 correlation_id, 3 start_ns, 4 end_ns, 5 device_id, 6 stream_id,
  // 7 the kernel's name id (NULL for copies and memsets), 8 bytes (0 for kernels).
  const std::string common = "pid, correlation_id, start_ns, end_ns, device_id, stream_id, ";
  return detail::union_in_order<GpuSpanRow>(
      reader,
      {"SELECT 0, " + common + kernel_name_column(names) + ", 0 FROM kernel",
       "SELECT 1, " + common + "NULL, bytes FROM memcpy",
       "SELECT 2, " + common + "NULL, bytes FROM memset"},
      "2, 3, 4",
      [](const Statement& s, GpuSpanRow& r) {
        r.table = static_cast<GpuTable>(s.int64(0));
        detail::read_columns(s, r, 1, &GpuSpanRow::pid, &GpuSpanRow::correlation_id,
                             &GpuSpanRow::start_ns, &GpuSpanRow::end_ns, &GpuSpanRow::device_id,
                             &GpuSpanRow::stream_id);
        r.name_id = r.table == GpuTable::Kernel ? s.int64(7) : 0;
        r.bytes = s.int64(8);
      },
      &correlation_start_key<GpuSpanRow>);
}

Cursor<ApiCallRow> api_calls_by_correlation(const Reader& reader, const ActivityFilter& filter) {
  return open<ApiCallRow>(
      reader,
      "SELECT pid, correlation_id, start_ns, end_ns, tid, domain, callback_id, name_id, "
      "return_code FROM api_call",
      filter, kApi, "ORDER BY pid, correlation_id, start_ns",
      [](const Statement& s, ApiCallRow& r) {
        detail::read_columns(s, r, 0, &ApiCallRow::pid, &ApiCallRow::correlation_id,
                             &ApiCallRow::start_ns, &ApiCallRow::end_ns, &ApiCallRow::tid,
                             &ApiCallRow::domain, &ApiCallRow::callback_id, &ApiCallRow::name_id,
                             &ApiCallRow::return_code);
      },
      {}, &correlation_start_key<ApiCallRow>);
}

Cursor<ApiCallRow> api_call_first_starts(const Reader& reader) {
  return Cursor<ApiCallRow>(
      reader.prepare("SELECT pid, correlation_id, MIN(start_ns) FROM api_call GROUP BY pid, "
                     "correlation_id ORDER BY pid, correlation_id"),
      [](const Statement& s, ApiCallRow& r) {
        detail::read_columns(s, r, 0, &ApiCallRow::pid, &ApiCallRow::correlation_id,
                             &ApiCallRow::start_ns);
      });
}

}  // namespace fuselens::db
