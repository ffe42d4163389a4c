#pragma once
// The trace layouts of a capture (issue 21; db/schema.sql, "Version 10"): the full layout, one
// row per kernel in `kernel` and per API call in `api_call` with every column, indexed at
// finalize; and the lean layout, the same records interned and delta-coded in kernel_config /
// kernel_lean and api_config / api_call_lean, without indexes, read through views named `kernel`
// and `api_call` that give every column of the full layout with the same values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fuselens::db {

class Connection;

enum class TraceLayout {
  Full,  ///< tables kernel and api_call (every capture before schema version 10)
  Lean,  ///< tables kernel_lean, kernel_config, api_call_lean, api_config (version 10)
};

/// "full" or "lean".
const char* to_string(TraceLayout layout);
/// The layout named `name` ("full", "lean"); nullopt for anything else.
std::optional<TraceLayout> parse_trace_layout(std::string_view name);

/// The layout of the capture open in `connection`: Lean when its main schema has a table
/// kernel_lean and no table kernel, else Full. Throws db::Error when the schema cannot be read.
TraceLayout capture_layout(const Connection& connection);

/// The statements that create views `kernel` and `api_call` over the lean tables, with the
/// columns of the full layout's tables in their order: start_ns = config.base_ns + start_ns,
/// end_ns = start_ns + duration_ns, correlation_id = id + correlation_delta (an overflowing sum
/// reads as a real, which the reader's timestamp check refuses). `create` is "CREATE VIEW" or
/// "CREATE TEMP VIEW"; `kernel_name` and `api_name` the views' names; `schema` the qualifier of
/// the lean tables ("" or "main.").
std::string lean_view_sql(std::string_view create, std::string_view kernel_name,
                          std::string_view api_name, std::string_view schema);

/// Writes `output` (which must not exist, or be an empty file), the capture `input` in the lean
/// layout: a copy (VACUUM INTO) whose kernel and api_call tables (and their indexes) are replaced
/// by the lean tables and the views of those names; every other table, the schema version and the
/// ids of the rows are kept, so every analysis gives the same output on both. Throws db::Error when
/// `input` is not a readable full-layout capture (Reader's checks), when `output` exists and
/// is not empty, when a kernel or API call
/// row holds a value outside the range of the collector's records (KernelRecord,
/// ApiCallRecord: the lean layout stores those), or on a write error; `output` is then removed.
void convert_to_lean(const std::string& input, const std::string& output);

/// The 2^31 ns window around a config's base within which a start is stored as a 4-byte
/// delta; a start outside it starts a new config row (db/schema.sql, "Version 10").
inline constexpr std::int64_t kLeanRebaseNs = std::int64_t{1} << 31;

}  // namespace fuselens::db
