#include "fuselens/db/TraceCursors.h"

#include <string>
#include <vector>

#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Records.h"

namespace fuselens::db {
namespace {

using detail::FilterColumns;

constexpr FilterColumns kNvtx{"start_ns", "", false, false, true};
constexpr FilterColumns kMarks{"timestamp_ns", "", false, false, true};
constexpr FilterColumns kMemory{"timestamp_ns", "", true, false, false};
constexpr FilterColumns kSync{"start_ns", "", false, true, false};

template <typename Row>
Cursor<Row> open(const Reader& reader, const std::string& select_from,
                 const std::string& extra_where, const ActivityFilter& filter,
                 const FilterColumns& columns, const std::string& order_by,
                 typename Cursor<Row>::ReadRow read) {
  std::vector<std::int64_t> binds;
  const std::string sql =
      detail::filtered_sql(select_from, extra_where, filter, columns, order_by, binds);
  return Cursor<Row>(detail::prepare_bound(reader, sql, binds), read);
}

std::optional<std::int64_t> optional_int(const Statement& s, int column) {
  if (s.is_null(column)) return std::nullopt;
  return s.int64(column);
}

void read_payload(const Statement& s, int column, NvtxRow& r) {
  if (s.is_null(column)) return;
  r.payload_int = s.int64(column);
  r.payload_real = s.real(column);
}

/// pid, tid, domain_id, text_id, start_ns, end_ns: the first six columns of most range queries.
void read_range_head(const Statement& s, NvtxRow& r) {
  detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::domain_id,
                       &NvtxRow::text_id, &NvtxRow::start_ns);
  r.end_ns = optional_int(s, 5);
}

std::string device_kind() { return std::to_string(static_cast<int>(MemoryKind::Device)); }

}  // namespace

Cursor<NvtxRow> nvtx_range_names(const Reader& reader, const ActivityFilter& filter) {
  return open<NvtxRow>(reader,
                       "SELECT pid, tid, domain_id, text_id, start_ns, end_ns, id FROM nvtx_range",
                       "", filter, kNvtx, "", [](const Statement& s, NvtxRow& r) {
                         read_range_head(s, r);
                         r.id = s.int64(6);
                       });
}

Cursor<NvtxRow> ended_nvtx_ranges(const Reader& reader, bool ids_only) {
  if (ids_only) {
    return Cursor<NvtxRow>(reader.prepare("SELECT id FROM nvtx_range WHERE end_ns IS NOT NULL"),
                           [](const Statement& s, NvtxRow& r) { r.id = s.int64(0); });
  }
  return Cursor<NvtxRow>(reader.prepare("SELECT id, pid, tid, start_ns, end_ns FROM nvtx_range "
                                        "WHERE end_ns IS NOT NULL ORDER BY id"),
                         [](const Statement& s, NvtxRow& r) {
                           detail::read_columns(s, r, 0, &NvtxRow::id, &NvtxRow::pid, &NvtxRow::tid,
                                                &NvtxRow::start_ns, &NvtxRow::end_ns);
                         });
}

Cursor<NvtxRow> ended_nvtx_range_payloads(const Reader& reader, const ActivityFilter& filter) {
  return open<NvtxRow>(
      reader,
      "SELECT pid, tid, domain_id, text_id, start_ns, end_ns, payload_kind, payload"
      " FROM nvtx_range",
      "end_ns IS NOT NULL", filter, kNvtx, "", [](const Statement& s, NvtxRow& r) {
        read_range_head(s, r);
        r.payload_kind = s.int64(6);
        read_payload(s, 7, r);
      });
}

Cursor<NvtxRow> nvtx_ranges(const Reader& reader, bool with_style, const ActivityFilter& filter) {
  if (with_style) {
    return open<NvtxRow>(
        reader,
        "SELECT pid, tid, domain_id, text_id, start_ns, end_ns, depth, category, color, "
        "payload_kind, payload FROM nvtx_range",
        "", filter, kNvtx, "", [](const Statement& s, NvtxRow& r) {
          read_range_head(s, r);
          detail::read_columns(s, r, 6, &NvtxRow::depth, &NvtxRow::category, &NvtxRow::color,
                               &NvtxRow::payload_kind);
          read_payload(s, 10, r);
        });
  }
  return open<NvtxRow>(
      reader,
      "SELECT pid, tid, domain_id, text_id, start_ns, end_ns, depth, payload_kind, payload"
      " FROM nvtx_range",
      "", filter, kNvtx, "", [](const Statement& s, NvtxRow& r) {
        read_range_head(s, r);
        r.depth = s.int64(6);
        r.payload_kind = s.int64(7);
        read_payload(s, 8, r);
      });
}

Cursor<NvtxRow> ended_nvtx_ranges_named(const Reader& reader) {
  return Cursor<NvtxRow>(
      reader.prepare("SELECT r.pid, r.tid, d.value, t.value, r.start_ns, r.end_ns FROM nvtx_range r"
                     " JOIN strings d ON d.id = r.domain_id JOIN strings t ON t.id = r.text_id"
                     " WHERE r.end_ns IS NOT NULL"),
      [](const Statement& s, NvtxRow& r) {
        detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::domain,
                             &NvtxRow::text, &NvtxRow::start_ns, &NvtxRow::end_ns);
      });
}

Cursor<NvtxRow> autograd_nvtx_ranges(const Reader& reader) {
  return Cursor<NvtxRow>(
      reader.prepare(
          "SELECT r.pid, r.tid, t.value, r.start_ns, COALESCE(r.end_ns, 9223372036854775807)"
          " FROM nvtx_range r JOIN strings t ON t.id = r.text_id"
          " WHERE t.value LIKE '%, seq = %' OR t.value LIKE 'autograd::engine::evaluate_function: "
          "%'"),
      [](const Statement& s, NvtxRow& r) {
        detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::text,
                             &NvtxRow::start_ns, &NvtxRow::end_ns);
      });
}

Cursor<NvtxRow> module_nvtx_ranges(const Reader& reader) {
  return Cursor<NvtxRow>(
      reader.prepare(
          "SELECT r.pid, r.tid, t.value, r.start_ns, COALESCE(r.end_ns, 9223372036854775807)"
          " FROM nvtx_range r JOIN strings t ON t.id = r.text_id"
          " WHERE t.value GLOB 'fuselens:module:*' ORDER BY r.pid, r.tid, r.start_ns, r.id"),
      [](const Statement& s, NvtxRow& r) {
        detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::text,
                             &NvtxRow::start_ns, &NvtxRow::end_ns);
      });
}

Cursor<NvtxRow> nvtx_marks(const Reader& reader, const ActivityFilter& filter) {
  return open<NvtxRow>(
      reader,
      "SELECT pid, tid, domain_id, text_id, timestamp_ns, category, color, payload_kind, "
      "payload FROM nvtx_mark",
      "", filter, kMarks, "", [](const Statement& s, NvtxRow& r) {
        detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::domain_id,
                             &NvtxRow::text_id, &NvtxRow::start_ns, &NvtxRow::category,
                             &NvtxRow::color, &NvtxRow::payload_kind);
        read_payload(s, 8, r);
      });
}

Cursor<NvtxRow> nvtx_marks_in_domain(const Reader& reader, const std::string& domain) {
  auto stmt = reader.prepare(
      "SELECT m.pid, m.tid, m.timestamp_ns, t.value FROM nvtx_mark m"
      " JOIN strings d ON d.id = m.domain_id JOIN strings t ON t.id = m.text_id"
      " WHERE d.value = ?");
  stmt.bind(1, std::string_view(domain));
  return Cursor<NvtxRow>(std::move(stmt), [](const Statement& s, NvtxRow& r) {
    detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::start_ns);
    r.text = s.text(3);
  });
}

Cursor<NvtxRow> module_name_marks(const Reader& reader) {
  // A range on the text (the prefix then anything) rather than LIKE, whose '_' is a wildcard.
  // main.: every name mark of the capture, also those before a window the reader is restricted
  // to (Window.cpp): the root's tree is named at its first call, in the warm-up.
  auto stmt = reader.prepare(
      std::string("SELECT m.pid, m.tid, m.timestamp_ns, t.value FROM ") +
      (reader.restricted() ? "main.nvtx_mark" : "nvtx_mark") +
      " m JOIN strings t ON t.id = m.text_id WHERE t.value >= ?1 AND t.value < ?2"
      " ORDER BY m.pid, m.timestamp_ns, m.id");
  std::string low(kModuleNamePrefix), high(kModuleNamePrefix);
  high.back() = static_cast<char>(high.back() + 1);  // ':' + 1 = ';'
  stmt.bind(1, std::string_view(low));
  stmt.bind(2, std::string_view(high));
  return Cursor<NvtxRow>(std::move(stmt), [](const Statement& s, NvtxRow& r) {
    detail::read_columns(s, r, 0, &NvtxRow::pid, &NvtxRow::tid, &NvtxRow::start_ns);
    r.text = s.text(3);
  });
}

bool has_nvtx_mark_in_domain(const Reader& reader, const std::string& domain) {
  auto s = reader.prepare(
      "SELECT 1 FROM nvtx_mark m JOIN strings d ON d.id = m.domain_id WHERE d.value = ? LIMIT 1");
  s.bind(1, std::string_view(domain));
  return s.step();
}

Cursor<MemoryEventRow> device_memory_history(const Reader& reader) {
  // main.: the capture's table, not the window's view that shadows it (Window.cpp).
  const std::string table = reader.has_table("memory_event")
                                ? "main.memory_event"
                                : "(SELECT 0 AS pid, 0 AS timestamp_ns, "
                                  "0 AS operation, 0 AS bytes, 0 AS "
                                  "memory_kind, 0 AS id LIMIT 0)";
  return Cursor<MemoryEventRow>(
      reader.prepare("SELECT pid, timestamp_ns, operation, bytes FROM " + table +
                     " WHERE memory_kind = " + device_kind() + " ORDER BY pid, timestamp_ns, id"),
      [](const Statement& s, MemoryEventRow& r) {
        detail::read_columns(s, r, 0, &MemoryEventRow::pid, &MemoryEventRow::timestamp_ns,
                             &MemoryEventRow::operation, &MemoryEventRow::bytes);
      });
}

Cursor<MemoryEventRow> device_memory_events(const Reader& reader, MemoryOrder order,
                                            const ActivityFilter& filter) {
  const std::string where = "memory_kind = " + device_kind();
  switch (order) {
    case MemoryOrder::ByProcessDevice:
      return open<MemoryEventRow>(
          reader, "SELECT pid, device_id, timestamp_ns, operation, bytes FROM memory_event", where,
          filter, kMemory, "ORDER BY pid, device_id, timestamp_ns, id",
          [](const Statement& s, MemoryEventRow& r) {
            detail::read_columns(s, r, 0, &MemoryEventRow::pid, &MemoryEventRow::device_id,
                                 &MemoryEventRow::timestamp_ns, &MemoryEventRow::operation,
                                 &MemoryEventRow::bytes);
          });
    case MemoryOrder::ByDevice:
    case MemoryOrder::ByTime:
      break;
  }
  return open<MemoryEventRow>(
      reader, "SELECT device_id, timestamp_ns, operation, bytes FROM memory_event", where, filter,
      kMemory,
      order == MemoryOrder::ByDevice ? "ORDER BY device_id, timestamp_ns, id"
                                     : "ORDER BY timestamp_ns, id",
      [](const Statement& s, MemoryEventRow& r) {
        detail::read_columns(s, r, 0, &MemoryEventRow::device_id, &MemoryEventRow::timestamp_ns,
                             &MemoryEventRow::operation, &MemoryEventRow::bytes);
      });
}

Cursor<MemoryEventRow> memory_events(const Reader& reader, const ActivityFilter& filter) {
  return open<MemoryEventRow>(
      reader,
      "SELECT pid, device_id, timestamp_ns, operation, memory_kind, address, bytes"
      " FROM memory_event",
      "", filter, kMemory, "ORDER BY timestamp_ns, id", [](const Statement& s, MemoryEventRow& r) {
        detail::read_columns(s, r, 0, &MemoryEventRow::pid, &MemoryEventRow::device_id,
                             &MemoryEventRow::timestamp_ns, &MemoryEventRow::operation,
                             &MemoryEventRow::memory_kind, &MemoryEventRow::address,
                             &MemoryEventRow::bytes);
      });
}

Cursor<DeviceMemoryExtent> device_memory_extents(const Reader& reader) {
  return Cursor<DeviceMemoryExtent>(
      reader.prepare(
          "SELECT device_id, count(*), min(timestamp_ns), max(timestamp_ns) FROM memory_event"
          " WHERE memory_kind = " +
          device_kind() + " GROUP BY device_id"),
      [](const Statement& s, DeviceMemoryExtent& r) {
        detail::read_columns(s, r, 0, &DeviceMemoryExtent::device_id, &DeviceMemoryExtent::events,
                             &DeviceMemoryExtent::first_ns, &DeviceMemoryExtent::last_ns);
      });
}

Cursor<SyncRow> syncs(const Reader& reader, const ActivityFilter& filter) {
  return open<SyncRow>(
      reader,
      "SELECT pid, start_ns, end_ns, sync_type, context_id, stream_id, correlation_id"
      " FROM sync_event",
      "", filter, kSync, "ORDER BY start_ns, id", [](const Statement& s, SyncRow& r) {
        detail::read_columns(s, r, 0, &SyncRow::pid, &SyncRow::start_ns, &SyncRow::end_ns,
                             &SyncRow::sync_type, &SyncRow::context_id, &SyncRow::stream_id,
                             &SyncRow::correlation_id);
      });
}

Cursor<ThreadRow> threads(const Reader& reader, bool ordered) {
  return Cursor<ThreadRow>(
      reader.prepare(ordered ? "SELECT pid, tid, name FROM thread ORDER BY pid, tid"
                             : "SELECT pid, tid, name FROM thread"),
      [](const Statement& s, ThreadRow& r) {
        r.pid = s.int64(0);
        r.tid = s.int64(1);
        if (!s.is_null(2)) r.name = s.text(2);
      });
}

std::vector<TimeSpan> capture_windows(const Reader& reader) {
  std::vector<TimeSpan> out;
  if (!reader.has_table("capture_window")) return out;
  auto s = reader.prepare("SELECT start_ns, end_ns FROM capture_window ORDER BY start_ns");
  while (s.step()) {
    const std::int64_t start = s.int64(0);
    const std::int64_t end = s.is_null(1) ? kMaxTimestampNs : s.int64(1);
    if (start < 0 || end < start || end > kMaxTimestampNs) continue;
    out.push_back({start, end});
  }
  return out;
}

std::optional<std::int64_t> single_kernel_name_id(const Reader& reader) {
  // One aggregate a subquery: SQLite answers a lone min() or max() from the index's ends.
  Statement s = reader.prepare(
      "SELECT (SELECT min(demangled_name_id) FROM kernel), (SELECT max(demangled_name_id) FROM "
      "kernel)");
  // A NULL (no kernel), text or real id: not one name the search would see as one.
  if (!s.step() || !s.type_is_integer(0) || !s.type_is_integer(1)) return std::nullopt;
  const std::int64_t lo = s.int64(0), hi = s.int64(1);
  if (lo != hi) return std::nullopt;
  return lo;
}

namespace {

const char* timed_table_name(TimedTable table) {
  switch (table) {
    case TimedTable::Kernel:
      return "kernel";
    case TimedTable::Memcpy:
      return "memcpy";
    case TimedTable::Memset:
      return "memset";
    case TimedTable::MemoryEvent:
      return "memory_event";
    case TimedTable::ApiCall:
      return "api_call";
    case TimedTable::NvtxRange:
      return "nvtx_range";
    case TimedTable::NvtxMark:
      return "nvtx_mark";
  }
  return "kernel";
}

}  // namespace

bool has_rows(const Reader& reader, TimedTable table) {
  return reader.query_int(std::string("SELECT EXISTS(SELECT 1 FROM ") + timed_table_name(table) +
                          ")") != 0;
}

TimeExtent time_extent(const Reader& reader, TimedTable table) {
  const std::string name = timed_table_name(table);
  std::string sql = "SELECT min(start_ns), max(end_ns) FROM " + name;
  if (table == TimedTable::MemoryEvent || table == TimedTable::NvtxMark) {
    sql = "SELECT min(timestamp_ns), max(timestamp_ns) FROM " + name;
  } else if (table == TimedTable::NvtxRange) {
    sql = "SELECT min(start_ns), max(max(start_ns, coalesce(end_ns, start_ns))) FROM " + name;
  }
  // Two values, checked here: the kernel and api_call rows' own check (deferred by a reader of
  // the stored aggregates) runs only when they are implausible, for its message naming the row.
  const bool deferred = table == TimedTable::Kernel || table == TimedTable::ApiCall;
  auto s = deferred ? reader.prepare_unwatched(sql) : reader.prepare(sql);
  TimeExtent out;
  if (!s.step()) return out;
  out.first_ns = optional_int(s, 0);
  out.last_ns = optional_int(s, 1);
  const auto plausible = [](const std::optional<std::int64_t>& t) {
    return !t || (*t >= 0 && *t < kMaxTimestampNs);
  };
  if (!plausible(out.first_ns) || !plausible(out.last_ns) ||
      (out.first_ns && out.last_ns && *out.last_ns < *out.first_ns)) {
    if (deferred) reader.check_table_timestamps(name);
    throw Error("'" + reader.path() + "' holds an implausible timestamp: the times of " + name +
                " span outside 0 <= start <= end < 2^62 ns: the capture is damaged or was not "
                "written by FuseLens");
  }
  return out;
}

Cursor<CctNodeRow> cct_nodes(const Reader& reader) {
  return Cursor<CctNodeRow>(
      reader.prepare("SELECT id, COALESCE(parent_id, 0), COALESCE(frame_id, 0), pid FROM cct_node"),
      [](const Statement& s, CctNodeRow& r) {
        detail::read_columns(s, r, 0, &CctNodeRow::id, &CctNodeRow::parent_id,
                             &CctNodeRow::frame_id, &CctNodeRow::pid);
      });
}

std::int64_t cct_process_count(const Reader& reader) {
  return reader.query_int("SELECT COUNT(DISTINCT pid) FROM cct_node");
}

Cursor<FrameRow> frames(const Reader& reader) {
  return Cursor<FrameRow>(
      reader.prepare(
          "SELECT f.id, COALESCE(fn.value, ''), COALESCE(m.value, ''), COALESCE(f.module_offset, "
          "0),"
          " COALESCE(fl.value, ''), COALESCE(f.line, 0), f.kind FROM frame f"
          " LEFT JOIN strings fn ON fn.id = f.function_id LEFT JOIN strings m ON m.id = f.module_id"
          " LEFT JOIN strings fl ON fl.id = f.file_id"),
      [](const Statement& s, FrameRow& r) {
        detail::read_columns(s, r, 0, &FrameRow::id, &FrameRow::function, &FrameRow::module,
                             &FrameRow::module_offset, &FrameRow::file, &FrameRow::line,
                             &FrameRow::kind);
      });
}

Cursor<FrameRow> call_path_frames(const Reader& reader, std::int64_t pid,
                                  std::int64_t correlation_id, std::int64_t max_walk) {
  auto stmt = reader.prepare(
      "WITH RECURSIVE up(node, depth, tid) AS ("
      "  SELECT cct_node_id, 0, tid FROM api_context WHERE pid = ?1 AND correlation_id = ?2"
      "  UNION ALL"
      "  SELECT n.parent_id, up.depth + 1, up.tid FROM up JOIN cct_node n ON n.id = up.node"
      "  WHERE n.parent_id IS NOT NULL AND up.depth < ?3)"
      " SELECT up.tid, f.id IS NULL, COALESCE(f.kind, 0), COALESCE(fn.value, ''),"
      " COALESCE(m.value, ''), COALESCE(f.module_offset, 0), COALESCE(fl.value, ''),"
      " COALESCE(f.line, 0)"
      " FROM up LEFT JOIN cct_node n ON n.id = up.node LEFT JOIN frame f ON f.id = n.frame_id"
      " LEFT JOIN strings fn ON fn.id = f.function_id LEFT JOIN strings m ON m.id = f.module_id"
      " LEFT JOIN strings fl ON fl.id = f.file_id"
      " ORDER BY up.depth DESC");
  stmt.bind(1, pid);
  stmt.bind(2, correlation_id);
  stmt.bind(3, max_walk);
  return Cursor<FrameRow>(std::move(stmt), [](const Statement& s, FrameRow& r) {
    r.tid = s.int64(0);
    r.missing = s.int64(1) != 0;
    detail::read_columns(s, r, 2, &FrameRow::kind, &FrameRow::function, &FrameRow::module,
                         &FrameRow::module_offset, &FrameRow::file, &FrameRow::line);
  });
}

// Every api_context row, `order` appended ("" or an ORDER BY clause). Sequence numbers from
// schema 9 on; a negative or NULL one reads as -1 (none).
static Cursor<LaunchContextRow> launch_context_rows(const Reader& reader, std::string_view order) {
  const std::string seqs =
      reader.schema_version() >= 9
          ? "COALESCE(MAX(forward_seq, -1), -1), COALESCE(MAX(backward_seq, -1), -1)"
          : "-1, -1";
  return Cursor<LaunchContextRow>(
      reader.prepare("SELECT pid, correlation_id, cct_node_id, tid, " + seqs + " FROM api_context" +
                     std::string(order)),
      [](const Statement& s, LaunchContextRow& r) {
        detail::read_columns(s, r, 0, &LaunchContextRow::pid, &LaunchContextRow::correlation_id,
                             &LaunchContextRow::node_id, &LaunchContextRow::tid,
                             &LaunchContextRow::forward_seq, &LaunchContextRow::backward_seq);
      });
}

Cursor<LaunchContextRow> launch_contexts(const Reader& reader) {
  return launch_context_rows(reader, "");
}

Cursor<LaunchContextRow> launch_contexts_by_correlation(const Reader& reader) {
  return launch_context_rows(reader, " ORDER BY pid, correlation_id");
}

std::int64_t launch_context_count(const Reader& reader) {
  return reader.query_int("SELECT COUNT(*) FROM api_context");
}

bool has_launch_contexts(const Reader& reader) {
  return reader.query_int("SELECT EXISTS (SELECT 1 FROM api_context)") != 0;
}

Cursor<GpuOperationRow> gpu_operations(const Reader& reader, GpuTable table) {
  const char* sql = nullptr;
  switch (table) {
    case GpuTable::Kernel:
      sql =
          "SELECT k.pid, k.correlation_id, '<gpu kernel> ' || n.value, k.end_ns - k.start_ns, 0,"
          " COALESCE(k.graph_node_id, 0)"
          " FROM kernel k JOIN strings n ON n.id = k.demangled_name_id";
      break;
    case GpuTable::Memcpy:
      sql =
          "SELECT m.pid, m.correlation_id, '<gpu copy> ' || COALESCE(e.name, 'Unknown'),"
          " m.end_ns - m.start_ns, m.bytes, COALESCE(m.graph_node_id, 0) FROM memcpy m"
          " LEFT JOIN enum_memcpy_kind e ON e.value = m.copy_kind";
      break;
    case GpuTable::Memset:
      sql =
          "SELECT pid, correlation_id, '<gpu memset>', end_ns - start_ns, bytes,"
          " COALESCE(graph_node_id, 0) FROM memset";
      break;
  }
  return Cursor<GpuOperationRow>(reader.prepare(sql), [](const Statement& s, GpuOperationRow& r) {
    detail::read_columns(s, r, 0, &GpuOperationRow::pid, &GpuOperationRow::correlation_id,
                         &GpuOperationRow::label, &GpuOperationRow::duration_ns,
                         &GpuOperationRow::bytes, &GpuOperationRow::graph_node_id);
  });
}

Cursor<GpuOperationCode> gpu_operations_by_correlation(const Reader& reader) {
  // Columns: 0 table, 1 id, 2 pid, 3 correlation_id, 4 code, 5 duration, 6 bytes, 7 graph node.
  return detail::union_in_order<GpuOperationCode>(
      reader,
      {"SELECT 0, id, pid, correlation_id, demangled_name_id, end_ns - start_ns, 0,"
       " COALESCE(graph_node_id, 0) FROM kernel",
       "SELECT 1, id, pid, correlation_id, copy_kind, end_ns - start_ns, bytes,"
       " COALESCE(graph_node_id, 0) FROM memcpy",
       "SELECT 2, id, pid, correlation_id, 0, end_ns - start_ns, bytes,"
       " COALESCE(graph_node_id, 0) FROM memset"},
      "3, 4",
      [](const Statement& s, GpuOperationCode& r) {
        r.table = static_cast<GpuTable>(s.int64(0));
        detail::read_columns(s, r, 1, &GpuOperationCode::id, &GpuOperationCode::pid,
                             &GpuOperationCode::correlation_id, &GpuOperationCode::code,
                             &GpuOperationCode::duration_ns, &GpuOperationCode::bytes,
                             &GpuOperationCode::graph_node_id);
      },
      [](const GpuOperationCode& r) {
        return OrderKey{r.pid, r.correlation_id, 0};
      });
}

std::unordered_map<std::int64_t, std::string> copy_operation_labels(const Reader& reader) {
  std::unordered_map<std::int64_t, std::string> labels;
  if (!reader.has_table("enum_memcpy_kind")) return labels;
  auto s = reader.prepare("SELECT value, name FROM enum_memcpy_kind");
  while (s.step()) {
    // The first row of a value, as gpu_operations' LEFT JOIN would read it (values are unique).
    labels.emplace(s.int64(0), "<gpu copy> " + (s.is_null(1) ? std::string("Unknown") : s.text(1)));
  }
  return labels;
}

Cursor<GraphNodeRow> graph_nodes(const Reader& reader) {
  // Before schema version 7 the table is absent: an empty query of the same shape.
  const char* sql = reader.has_table("graph_node")
                        ? "SELECT pid, node_id, original_node_id, graph_id, correlation_id"
                          " FROM graph_node"
                        : "SELECT 0, 0, 0, 0, 0 WHERE 0";
  return Cursor<GraphNodeRow>(reader.prepare(sql), [](const Statement& s, GraphNodeRow& r) {
    detail::read_columns(s, r, 0, &GraphNodeRow::pid, &GraphNodeRow::node_id,
                         &GraphNodeRow::original_node_id, &GraphNodeRow::graph_id,
                         &GraphNodeRow::correlation_id);
  });
}

Cursor<CounterRow> kernel_counters(const Reader& reader) {
  return Cursor<CounterRow>(
      reader.prepare("SELECT m.pid, m.correlation_id, s.value, m.value FROM kernel_metric m"
                     " JOIN strings s ON s.id = m.metric_id"),
      [](const Statement& s, CounterRow& r) {
        detail::read_columns(s, r, 0, &CounterRow::pid, &CounterRow::correlation_id,
                             &CounterRow::metric);
        r.value = s.real(3);
      });
}

Cursor<KernelArgRow> kernel_args(const Reader& reader) {
  return Cursor<KernelArgRow>(reader.prepare("SELECT pid, correlation_id, value FROM kernel_arg "
                                             "ORDER BY pid, correlation_id, param_index"),
                              [](const Statement& s, KernelArgRow& r) {
                                detail::read_columns(s, r, 0, &KernelArgRow::pid,
                                                     &KernelArgRow::correlation_id,
                                                     &KernelArgRow::value);
                              });
}

}  // namespace fuselens::db
