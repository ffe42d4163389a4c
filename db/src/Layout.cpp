#include "fuselens/db/Layout.h"

#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

const char* to_string(TraceLayout layout) { return layout == TraceLayout::Lean ? "lean" : "full"; }

std::optional<TraceLayout> parse_trace_layout(std::string_view name) {
  if (name == "full") return TraceLayout::Full;
  if (name == "lean") return TraceLayout::Lean;
  return std::nullopt;
}

TraceLayout capture_layout(const Connection& connection) {
  const bool lean = connection.query_int(
                        "SELECT EXISTS(SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND "
                        "name = 'kernel_lean') AND NOT EXISTS(SELECT 1 FROM main.sqlite_master "
                        "WHERE type = 'table' AND name = 'kernel')") != 0;
  return lean ? TraceLayout::Lean : TraceLayout::Full;
}

std::string lean_view_sql(std::string_view create, std::string_view kernel_name,
                          std::string_view api_name, std::string_view schema) {
  const std::string c(create), s(schema);
  return c + " " + std::string(kernel_name) +
         " AS SELECT k.id AS id, c.pid AS pid, c.base_ns + k.start_ns AS start_ns,"
         " c.base_ns + k.start_ns + k.duration_ns AS end_ns, c.device_id AS device_id,"
         " c.context_id AS context_id, c.stream_id AS stream_id,"
         " k.id + k.correlation_delta AS correlation_id, c.grid_x AS grid_x, c.grid_y AS grid_y,"
         " c.grid_z AS grid_z, c.block_x AS block_x, c.block_y AS block_y, c.block_z AS block_z,"
         " c.registers_per_thread AS registers_per_thread,"
         " c.static_shared_bytes AS static_shared_bytes,"
         " c.dynamic_shared_bytes AS dynamic_shared_bytes,"
         " c.local_memory_per_thread AS local_memory_per_thread,"
         " c.short_name_id AS short_name_id, c.demangled_name_id AS demangled_name_id,"
         " c.mangled_name_id AS mangled_name_id, k.graph_id AS graph_id,"
         " k.graph_node_id AS graph_node_id FROM " +
         s + "kernel_lean AS k LEFT JOIN " + s + "kernel_config AS c ON c.id = k.config_id;\n" + c +
         " " + std::string(api_name) +
         " AS SELECT a.id AS id, c.pid AS pid, c.tid AS tid, c.domain AS domain,"
         " c.callback_id AS callback_id, c.name_id AS name_id, c.base_ns + a.start_ns AS start_ns,"
         " c.base_ns + a.start_ns + a.duration_ns AS end_ns,"
         " a.id + a.correlation_delta AS correlation_id, c.return_code AS return_code FROM " +
         s + "api_call_lean AS a LEFT JOIN " + s + "api_config AS c ON c.id = a.config_id;\n";
}

}  // namespace fuselens::db
