// convert_to_lean (Layout.h): a full-layout capture rewritten in the lean layout.

#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "LeanEncoder.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

// A column of a full-layout table as the collector's records hold it: the range of its type.
struct Column {
  const char* name;
  std::int64_t min, max;
  bool nullable = false;
};
constexpr std::int64_t kU32 = 4294967295LL, kI32Min = -2147483648LL, kI32 = 2147483647LL;
constexpr std::int64_t kI64Min = INT64_MIN, kI64 = INT64_MAX;

const std::vector<Column> kKernelColumns = {
    {"id", 1, kI64},
    {"pid", 0, kU32},
    {"start_ns", 0, kMaxTimestampNs},
    {"end_ns", 0, kMaxTimestampNs},
    {"device_id", 0, kU32},
    {"context_id", 0, kU32},
    {"stream_id", 0, kU32},
    {"correlation_id", 0, kU32},
    {"grid_x", kI32Min, kI32},
    {"grid_y", kI32Min, kI32},
    {"grid_z", kI32Min, kI32},
    {"block_x", kI32Min, kI32},
    {"block_y", kI32Min, kI32},
    {"block_z", kI32Min, kI32},
    {"registers_per_thread", 0, kU32},
    {"static_shared_bytes", kI32Min, kI32},
    {"dynamic_shared_bytes", kI32Min, kI32},
    {"local_memory_per_thread", 0, kU32},
    {"short_name_id", kI64Min, kI64},
    {"demangled_name_id", kI64Min, kI64},
    {"mangled_name_id", kI64Min, kI64},
    {"graph_id", 0, kU32, true},
    {"graph_node_id", 0, kI64, true},
};
const std::vector<Column> kApiColumns = {
    {"id", 1, kI64},
    {"pid", 0, kU32},
    {"tid", 0, kU32},
    {"domain", 0, kU32},
    {"callback_id", 0, kU32},
    {"name_id", kI64Min, kI64},
    {"start_ns", 0, kMaxTimestampNs},
    {"end_ns", 0, kMaxTimestampNs},
    {"correlation_id", 0, kU32},
    {"return_code", 0, kU32},
};

// "c1, c2, ..." of `columns`.
std::string column_list(const std::vector<Column>& columns) {
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

// Refuses a table whose rows do not fit the records the lean layout encodes (a value of another
// type, out of its field's range, or NULL where the schema forbids it): converted, it would not
// read back the same.
void check_rows(const Connection& db, const std::string& path, const std::string& table,
                const std::vector<Column>& columns) {
  std::string bad;
  for (const auto& c : columns) {
    const std::string n = c.name;
    std::string ok = "(typeof(" + n + ") = 'integer' AND " + n + " BETWEEN " +
                     std::to_string(c.min) + " AND " + std::to_string(c.max) + ")";
    if (c.nullable) ok = "(" + n + " IS NULL OR " + ok + ")";
    bad += (bad.empty() ? "NOT (" : " AND ") + ok;
  }
  auto s = db.prepare("SELECT rowid FROM " + table + " WHERE " + bad + ") LIMIT 1");
  if (s.step()) {
    throw Error("'" + path + "': " + table + " row " + s.text(0) +
                " holds a value outside its column's range (or of another type): not converted");
  }
}

// The CREATE TABLE statement of `table` in db/schema.sql.
std::string schema_table_sql(const std::string& table) {
  const std::string_view schema = schema_sql();
  const std::string head = "CREATE TABLE IF NOT EXISTS " + table + " (";
  const auto begin = schema.find(head);
  const auto end = begin == std::string_view::npos ? begin : schema.find("\n);", begin);
  if (end == std::string_view::npos) throw Error("schema.sql has no table " + table);
  return std::string(schema.substr(begin, end + 3 - begin));
}

}  // namespace

void convert_to_lean(const std::string& input, const std::string& output) {
  {
    const Reader reader(input);  // every check a reader makes, timestamps included
    if (reader.lean()) throw Error("'" + input + "' is already in the lean layout");
    if (!reader.has_table("kernel") || !reader.has_table("api_call")) {
      throw Error("'" + input + "' has no kernel or api_call table: not converted");
    }
    std::error_code ec;
    if (std::filesystem::exists(output, ec) && !(std::filesystem::is_regular_file(output, ec) &&
                                                 std::filesystem::file_size(output, ec) == 0))
      throw Error("'" + output + "' exists");
    // A compact copy, with what a -wal beside the input holds.
    auto vacuum = reader.prepare("VACUUM INTO ?");
    vacuum.bind(1, std::string_view(output));
    vacuum.run();
  }
  Connection db(output, Connection::Mode::ReadWrite);
  try {
    check_rows(db, input, "kernel", kKernelColumns);
    check_rows(db, input, "api_call", kApiColumns);
    in_transaction(db, [&] {
      for (const char* t : {"kernel_config", "kernel_lean", "api_config", "api_call_lean"})
        db.exec(schema_table_sql(t));
      LeanEncoder lean(db);
      auto kernels =
          db.prepare("SELECT " + column_list(kKernelColumns) + " FROM kernel ORDER BY id");
      while (kernels.step()) {
        auto u = [&](int c) { return static_cast<std::uint32_t>(kernels.int64(c)); };
        auto i = [&](int c) { return static_cast<std::int32_t>(kernels.int64(c)); };
        KernelRecord k;
        k.pid = u(1);
        k.start_ns = static_cast<std::uint64_t>(kernels.int64(2));
        k.end_ns = static_cast<std::uint64_t>(kernels.int64(3));
        k.device_id = u(4);
        k.context_id = u(5);
        k.stream_id = u(6);
        k.correlation_id = u(7);
        k.grid_x = i(8);
        k.grid_y = i(9);
        k.grid_z = i(10);
        k.block_x = i(11);
        k.block_y = i(12);
        k.block_z = i(13);
        k.registers_per_thread = u(14);
        k.static_shared_bytes = i(15);
        k.dynamic_shared_bytes = i(16);
        k.local_memory_per_thread = u(17);
        if (!kernels.is_null(21)) k.graph_id = u(21);
        if (!kernels.is_null(22)) k.graph_node_id = static_cast<std::uint64_t>(kernels.int64(22));
        lean.kernel(kernels.int64(0), k, {kernels.int64(18), kernels.int64(19), kernels.int64(20)});
      }
      auto calls = db.prepare("SELECT " + column_list(kApiColumns) + " FROM api_call ORDER BY id");
      while (calls.step()) {
        auto u = [&](int c) { return static_cast<std::uint32_t>(calls.int64(c)); };
        ApiCallRecord a;
        a.pid = u(1);
        a.tid = u(2);
        a.domain = static_cast<ApiDomain>(u(3));
        a.callback_id = u(4);
        a.start_ns = static_cast<std::uint64_t>(calls.int64(6));
        a.end_ns = static_cast<std::uint64_t>(calls.int64(7));
        a.correlation_id = u(8);
        a.return_code = u(9);
        lean.api_call(calls.int64(0), a, calls.int64(5));
      }
      lean.flush();
      kernels.reset();
      calls.reset();
      db.exec("DROP TABLE kernel; DROP TABLE api_call;");
      db.exec(lean_view_sql("CREATE VIEW", "kernel", "api_call", ""));
    });
    db.exec("VACUUM");
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(output, ec);
    throw;
  }
}

}  // namespace fuselens::db
